import { GraphQLError, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from './context.js';
import { formatLsn, parseLsn, readingPrimary } from './db/read-replicas.js';
import type { AppDeps } from './kernel/request-scope.js';

/**
 * The header that carries a commit LSN: a mutation's response names the WAL position its
 * writes lie before; a request that sends one is read only where that position is replayed
 * (so a client can carry its writes to another gateway).
 */
export const LSN_HEADER = 'memgate-lsn';

/** Principals' last writes, kept for the read-your-writes window. */
class WrittenPositions {
  private readonly last = new Map<string, { lsn: bigint; at: number }>();

  constructor(private readonly windowMs: number) {}

  of(principalId: string): bigint | null {
    const entry = this.last.get(principalId);
    if (!entry) return null;
    if (performance.now() - entry.at <= this.windowMs) return entry.lsn;
    this.last.delete(principalId);
    return null;
  }

  record(principalId: string, lsn: bigint): void {
    this.last.set(principalId, { lsn: later(this.of(principalId), lsn) ?? lsn, at: performance.now() });
    if (this.last.size > 10_000) this.forgetExpired();
  }

  private forgetExpired(): void {
    for (const id of [...this.last.keys()]) this.of(id);
  }
}

function later(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

/** The LSN a request asks its reads to see, from its header; a malformed one is the caller's error. */
function requestedLsn(request: Request | undefined): bigint | null {
  const text = request?.headers.get(LSN_HEADER);
  if (!text) return null;
  const lsn = parseLsn(text);
  if (lsn === null) {
    throw new GraphQLError(`The ${LSN_HEADER} header must be a WAL position such as 0/16B3748.`, {
      extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
    });
  }
  return lsn;
}

type RoutedContext = Context & { request?: Request };

/**
 * On native PostgreSQL, where a query operation's reads go. With read replicas: to a replica
 * that has replayed everything its principal wrote in the last MEMGATE_READ_YOUR_WRITES_MS and
 * the LSN its request names, else to the primary; a mutation answers the commit LSN of its
 * writes (extensions.lsn and the memgate-lsn header). On the primary a read that lost its
 * connection is retried once. Subscriptions stay on the primary, which every change notice has
 * already reached.
 */
export function useReadRouting(deps: AppDeps): Plugin<RoutedContext> | null {
  if (deps.db.backend !== 'postgres') return null;
  const replicas = deps.db.replicas;
  const primary = readingPrimary(deps.db);
  const written = new WrittenPositions(deps.config.readYourWritesMs);
  const commitLsnOf = new WeakMap<Request, string>();
  return {
    onExecute({ args }) {
      const context = args.contextValue;
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      if (operation === 'query') {
        const atLeast = later(written.of(context.principal.id), requestedLsn(context.request));
        context.routeReads(replicas?.reader(atLeast) ?? primary);
        return;
      }
      if (operation !== 'mutation' || !replicas) return;
      return {
        async onExecuteDone({ result, setResult }) {
          if (!('data' in result || 'errors' in result)) return;
          const lsn = await replicas.commitLsn().catch(() => null);
          if (lsn === null) return;
          written.record(context.principal.id, lsn);
          const text = formatLsn(lsn);
          if (context.request) commitLsnOf.set(context.request, text);
          setResult({ ...result, extensions: { ...(result.extensions ?? {}), lsn: text } });
        },
      };
    },
    onResponse({ request, response }) {
      const lsn = commitLsnOf.get(request);
      if (lsn) response.headers.set(LSN_HEADER, lsn);
    },
  };
}
