import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'graphql-yoga';
import { MemgateError } from '../errors.js';
import type { Logger } from '../logger.js';
import { LOCAL_PRINCIPAL, type Principal } from './principal.js';
import { TokensFileError, hashToken, parseTokensFile, toPrincipal } from './tokens-file.js';

/**
 * Resolves the principal of a request or throws UNAUTHENTICATED. `current`, when present,
 * answers from the credentials already loaded, without any I/O (null: not authenticated):
 * what a live subscription asks before each event.
 */
export type Authenticate = ((request: Request) => Promise<Principal> | Principal) & {
  current?: (request: Request) => Principal | null;
};

/** Local mode (no tokens file): every request is the one full-access principal. */
export const localAuthenticate: Authenticate = () => LOCAL_PRINCIPAL;

// RFC 6750 b64token, bounded so a hostile header costs nothing to reject.
const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]{16,512}=*)[ ]*$/i;

export function unauthenticated(message: string): MemgateError {
  return new MemgateError('UNAUTHENTICATED', message);
}

/** The bearer token of a request, or null when the header is absent or not a bearer token. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (!header) return null;
  const m = BEARER.exec(header);
  return m ? m[1]! : null;
}

interface Loaded {
  principals: { hash: Buffer; principal: Principal }[];
  /**
   * SHA-256 of the file's bytes when read. Content, not mtime/size/inode: a file restored
   * from a copy can carry the same size, an old mtime and a reused inode.
   */
  digest: string;
}

export interface TokenAuthenticatorOptions {
  logger?: Logger;
  /** How often (at most) the file is re-read, so new, revoked and restored tokens apply live. */
  reloadIntervalMs?: number;
}

/**
 * Bearer-token authentication against the tokens file. The file is read (and validated) once
 * here — a broken file stops start-up — and re-read when it changes; a broken edit later is
 * logged and the previous principals stay in force. A deleted file fails closed: no principal
 * at all (logged) until a valid file is back.
 *
 * The presented token is hashed and compared with every stored hash in constant time, with no
 * early exit, so neither the position of a match nor a near miss shows in the timing.
 */
export async function createTokenAuthenticator(
  path: string,
  options: TokenAuthenticatorOptions = {},
): Promise<Authenticate & { reload(): Promise<void>; current(request: Request): Principal | null }> {
  const interval = options.reloadIntervalMs ?? 1000;
  let loaded = await load(path);
  let lastCheck = Date.now();
  let checking: Promise<void> | null = null;

  const reload = async (): Promise<void> => {
    try {
      const text = await readFile(path, 'utf8');
      if (digestOf(text) === loaded.digest) return;
      loaded = parse(text, path);
      options.logger?.info('tokens file reloaded', { principals: loaded.principals.length });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        // Fail closed: a deleted file revokes every token until a valid file is back.
        if (loaded !== MISSING) {
          options.logger?.error('tokens file is gone; every request is refused until it is back', { path });
        }
        loaded = MISSING;
        return;
      }
      options.logger?.error('tokens file reload failed; keeping the previous principals', {
        error: (error as Error).message,
      });
    }
  };

  const maybeReload = async (): Promise<void> => {
    if (Date.now() - lastCheck < interval) return;
    if (!checking) {
      checking = reload().finally(() => {
        lastCheck = Date.now();
        checking = null;
      });
    }
    await checking;
  };

  /** The principal of the request's token among the loaded principals, compared in constant time. */
  const current = (request: Request): Principal | null => {
    const header = request.headers.get('authorization');
    if (!header) return null;
    const token = bearerToken(request);
    const presented = Buffer.from(hashToken(token ?? header), 'hex');
    let match: Principal | null = null;
    for (const entry of loaded.principals) {
      if (timingSafeEqual(entry.hash, presented) && token !== null) match = entry.principal;
    }
    return match;
  };

  const authenticate = async (request: Request): Promise<Principal> => {
    await maybeReload();
    if (!request.headers.get('authorization')) {
      throw unauthenticated('Authentication required: send "Authorization: Bearer <token>".');
    }
    const match = current(request);
    if (!match) throw unauthenticated('Invalid bearer token.');
    return match;
  };
  return Object.assign(authenticate, { reload, current });
}

/** The state after the file disappeared: nobody authenticates. */
const MISSING: Loaded = Object.freeze({ principals: [], digest: '' });

function digestOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

async function load(path: string): Promise<Loaded> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TokensFileError(`cannot read tokens file ${path}: ${(error as Error).message}`);
  }
  return parse(text, path);
}

function parse(text: string, path: string): Loaded {
  const file = parseTokensFile(text, path);
  return {
    principals: file.principals.map((entry) => ({
      hash: Buffer.from(entry.tokenSha256, 'hex'),
      principal: Object.freeze(toPrincipal(entry)),
    })),
    digest: digestOf(text),
  };
}

// -----------------------------------------------------------------------------------------
// The yoga side: authenticate before anything is parsed or validated, so an unauthenticated
// caller learns nothing about the schema (not even from validation messages).

const principals = new WeakMap<Request, Principal>();

/** Answers 401 with a GraphQL-shaped body (extensions.code = UNAUTHENTICATED) on failure. */
export function useAuthentication(authenticate: Authenticate, logger?: Logger): Plugin {
  return {
    async onRequestParse({ request, endResponse, fetchAPI }) {
      try {
        principals.set(request, await authenticate(request));
      } catch (error) {
        // Duck-typed: a custom authenticator may throw any GraphQLError with this code.
        const coded = (error as { extensions?: { code?: unknown } }).extensions?.code === 'UNAUTHENTICATED';
        if (!coded) logger?.error('authentication failed unexpectedly', { error: String(error) });
        const accept = request.headers.get('accept') ?? '';
        const contentType = accept.includes('application/graphql-response+json')
          ? 'application/graphql-response+json; charset=utf-8'
          : 'application/json; charset=utf-8';
        const body = {
          errors: [
            coded
              ? { message: (error as Error).message, extensions: { code: 'UNAUTHENTICATED' } }
              : { message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
          ],
        };
        endResponse(
          new fetchAPI.Response(JSON.stringify(body), {
            status: coded ? 401 : 500,
            headers: {
              'content-type': contentType,
              ...(coded ? { 'www-authenticate': 'Bearer realm="memgate"' } : {}),
            },
          }),
        );
      }
    },
  };
}

/** The principal `useAuthentication` resolved for this request. */
export function authenticatedPrincipal(request: Request): Principal {
  const principal = principals.get(request);
  if (!principal) throw unauthenticated('Authentication required.');
  return principal;
}
