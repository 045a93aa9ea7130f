import type { DatabaseLoad, ReplicaLoad } from '../observability/metrics.js';
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
  /** Native PostgreSQL with MEMGATE_READ_DATABASE_URLS: the streaming replicas reads may use. */
  readonly replicas?: ReadReplicas;
  /**
   * On a request's view whose reads go to a replica: the primary, where the writes made while
   * serving a read (context traces, session compacts) go. Absent: this database takes writes.
   */
  readonly primary?: Queryable;
}

/** Streaming replicas that serve reads; see read-replicas.ts. */
export interface ReadReplicas {
  /**
   * A reader for a read that must see the WAL up to `minLsn` (null: any replica not too far
   * behind), or null when no replica qualifies and the primary answers.
   */
  reader(minLsn: bigint | null): Queryable | null;
  /**
   * The primary's WAL write position now: every commit that has returned lies at or before it
   * (null if the primary printed none).
   */
  commitLsn(): Promise<bigint | null>;
  state(): ReplicaLoad[];
  close(): Promise<void>;
}

/** Where a write made while serving a read goes: the primary of a replica-routed view. */
export function forWrites(db: Queryable & { primary?: Queryable }): Queryable {
  return db.primary ?? db;
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
    ...(db.primary ? { primary: countingQueryable(db.primary) } : {}),
    query: (sql, params) => count(() => observeStatement(sql, () => db.query(sql, params))),
    transaction: (name, fn) =>
      inSpan(`transaction ${name}`, {}, () => db.transaction(name, (tx) => fn(countingQueryable(tx)))),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    ...(db.session ? { session: db.session.bind(db) } : {}),
  };
}

/** A request's database whose plain queries go where `to` last pointed (the primary until then). */
export interface ReadRoute {
  db: Database;
  /** Sends this request's queries to `reader` (a replica), or back to the primary for null. */
  to(reader: Queryable | null): void;
}

/**
 * The request view of a native PostgreSQL database: queries follow the route, while
 * transactions, sessions and `primary` (writes made while serving a read) stay on the primary.
 * PGlite, one connection in this process, has nothing to route: the database itself.
 */
export function readRoute(base: Database): ReadRoute {
  if (base.backend !== 'postgres') return { db: base, to: () => undefined };
  let reads: Queryable = base;
  const db: Database = {
    backend: base.backend,
    primary: base,
    query: (sql, params) => reads.query(sql, params),
    transaction: (name, fn) => base.transaction(name, fn),
    exec: (sql) => base.exec(sql),
    close: () => base.close(),
    ...(base.session ? { session: base.session.bind(base) } : {}),
  };
  return {
    db,
    to: (reader) => {
      reads = reader ?? base;
    },
  };
}
