import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { isValidScope } from '../domain/scopes.js';
import type { Principal } from './principal.js';

/**
 * The tokens file (`MEMGATE_TOKENS_FILE`): who may call the gateway. Tokens themselves are
 * never stored, only the SHA-256 hex of each, so a leaked file grants nothing.
 *
 * {"principals":[{"id":"agent-1","tokenSha256":"<hex>","read":["support","team-*"],
 *   "write":["support"],"scopes":["workspace:w1"],"pii":false,"admin":false}]}
 */

// Namespace globs: the namespace alphabet plus `*` as the only wildcard.
const globSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:*-]{1,128}$/, 'a namespace glob is 1–128 characters of letters, digits, . _ : - *');

// `*` alone means every visibility scope; otherwise `type:id` labels.
const scopeEntrySchema = z
  .string()
  .refine((s) => s === '*' || isValidScope(s), 'a scope is a type:id label (e.g. workspace:w1) or "*"');

export const principalEntrySchema = z
  .object({
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/,
        'id must be 1–128 characters of letters, digits, . _ @ : -',
      ),
    tokenSha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'tokenSha256 must be the 64-character SHA-256 hex of the token')
      .transform((s) => s.toLowerCase()),
    read: z.array(globSchema).default([]),
    write: z.array(globSchema).default([]),
    scopes: z.array(scopeEntrySchema).default([]),
    pii: z.boolean().default(false),
    admin: z.boolean().default(false),
  })
  .strict();

export type PrincipalEntry = z.output<typeof principalEntrySchema>;

export const tokensFileSchema = z
  .object({ principals: z.array(principalEntrySchema) })
  .strict()
  .superRefine((file, ctx) => {
    const ids = new Set<string>();
    const hashes = new Set<string>();
    file.principals.forEach((p, i) => {
      if (ids.has(p.id))
        ctx.addIssue({ code: 'custom', path: ['principals', i, 'id'], message: `duplicate id "${p.id}"` });
      if (hashes.has(p.tokenSha256)) {
        ctx.addIssue({
          code: 'custom',
          path: ['principals', i, 'tokenSha256'],
          message: 'two principals share one token hash',
        });
      }
      ids.add(p.id);
      hashes.add(p.tokenSha256);
    });
  });

export type TokensFile = z.output<typeof tokensFileSchema>;

export class TokensFileError extends Error {}

/** The SHA-256 hex the file stores for a bearer token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A fresh bearer token: 256 random bits, prefixed so it is recognisable in a secret scanner. */
export function generateToken(): string {
  return `mgt_${randomBytes(32).toString('base64url')}`;
}

/** What the gateway enforces for an entry: `scopes: ["*"]` lifts visibility restrictions. */
export function toPrincipal(entry: PrincipalEntry): Principal {
  return {
    id: entry.id,
    read: [...entry.read],
    write: [...entry.write],
    scopes: entry.scopes.includes('*') ? null : [...new Set(entry.scopes)].sort(),
    pii: entry.pii,
    admin: entry.admin,
  };
}

export function parseTokensFile(text: string, path: string): TokensFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new TokensFileError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = tokensFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`);
    throw new TokensFileError(`${path} is not a valid tokens file:\n  - ${problems.join('\n  - ')}`);
  }
  return parsed.data;
}

export function readTokensFile(path: string): TokensFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TokensFileError(`cannot read tokens file ${path}: ${(error as Error).message}`);
  }
  return parseTokensFile(text, path);
}

/**
 * Adds a principal and writes the file atomically (temporary file + rename) with mode 0600.
 * A missing file is created. Duplicate ids are refused.
 */
export function appendPrincipal(path: string, entry: PrincipalEntry): TokensFile {
  const current: TokensFile = existsSync(path) ? readTokensFile(path) : { principals: [] };
  if (current.principals.some((p) => p.id === entry.id)) {
    throw new TokensFileError(`a principal with id "${entry.id}" already exists in ${path}`);
  }
  const next = tokensFileSchema.parse({ principals: [...current.principals, entry] });
  writeTokensFile(path, next);
  return next;
}

/** Removes a principal by id; its token stops working when the gateway next looks at the file. */
export function removePrincipal(path: string, id: string): TokensFile {
  const current = readTokensFile(path);
  if (!current.principals.some((p) => p.id === id)) {
    throw new TokensFileError(`no principal with id "${id}" in ${path}`);
  }
  const next = { principals: current.principals.filter((p) => p.id !== id) };
  writeTokensFile(path, next);
  return next;
}

function writeTokensFile(path: string, file: TokensFile): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
