import type { DatabaseLoad } from '../observability/metrics.js';
import { observeStatement } from './statement-capture.js';
import { inSpan } from '../observability/tracing.js';

/** The one database interface every store uses; two adapters implement it (PGlite, node-postgres). */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
  /**
   * `COPY … FROM STDIN` with `data` in COPY's text (string) or binary (bytes) format, inside
   * the transaction (bulk import). Both adapters' transactions have it; a bare pool does not.
   */
  copyFrom?(sql: string, data: string | Uint8Array): Promise<void>;
}

export type Backend = 'pglite' | 'postgres';

export interface Database extends Queryable {
  readonly backend: Backend;
  /** Runs `fn` inside BEGIN/COMMIT; any throw rolls back. `name` appears in logs and traces. */
  transaction<T>(name: string, fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Native PostgreSQL only: `fn` on one connection outside any transaction, its settings reset
   * afterwards (what `CREATE INDEX CONCURRENTLY` with session settings needs).
   */
  session?<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /** Pool clients (node-postgres) or queue depth (PGlite), read when /metrics is scraped. */
  load?(): DatabaseLoad;
  /** Reports each wait for the single connection (PGlite), in milliseconds; undefined stops it. */
  observeQueueWait?(listener: ((ms: number) => void) | undefined): void;
  /**
   * Native PostgreSQL only: LISTEN on `channel` over a dedicated connection (a pooled one
   * would lose its LISTEN on release). Reconnects on its own; resolves to the stop function.
   */
  listen?(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
}

/** Per-request SQL accounting, surfaced as `extensions.sql` when MEMGATE_TRACE_SQL=1. */
export interface SqlTrace {
  statements: number;
  ms: number;
}

/** Normalises parameters so both backends receive identical values. */
export function toParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

/** Wraps a database so that every statement is counted into `trace`, transactions included. */
export function countingDatabase(db: Database, trace: SqlTrace): Database {
  const count = <T>(run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    trace.statements += 1;
    return run().finally(() => {
      trace.ms += performance.now() - started;
    });
  };
  // Metrics and spans per statement, by its queryName (a no-op wrapper when both are off).
  const countingQueryable = (q: Queryable): Queryable => ({
    query: (sql, params) => count(() => observeStatement(sql, () => q.query(sql, params))),
    ...(q.copyFrom
      ? { copyFrom: (sql: string, data: string | Uint8Array) => count(() => q.copyFrom!(sql, data)) }
      : {}),
  });
  return {
    backend: db.backend,
    query: (sql, params) => count(() => observeStatement(sql, () => db.query(sql, params))),
    transaction: (name, fn) =>
      inSpan(`transaction ${name}`, {}, () => db.transaction(name, (tx) => fn(countingQueryable(tx)))),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    ...(db.session ? { session: db.session.bind(db) } : {}),
  };
}
