import { createHash } from 'node:crypto';
import pg from 'pg';
import { statementName } from './statement-capture.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFromStdin } from 'pg-copy-streams';
import pgvector from 'pgvector';
import { type Database, type QueryResult, type Queryable, toParam } from './database.js';

// int8 counts and ids fit in a double here; both backends then return numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export interface PostgresOptions {
  connectionString: string;
  statementTimeoutMs: number;
  max?: number;
}

export interface PostgresDatabase extends Database {
  readonly backend: 'postgres';
  pool: pg.Pool;
  /** Where the pool connects: pg_dump and restores open their own connection there. */
  connectionString: string;
}

/** Runs one statement on a pool or a client, as a prepared statement where that pays. */
type Run = <R>(
  q: pg.Pool | pg.PoolClient,
  sql: string,
  params?: readonly unknown[],
) => Promise<QueryResult<R>>;

export async function openPostgres(options: PostgresOptions): Promise<PostgresDatabase> {
  const vectorOid = await ensureExtensions(options.connectionString);
  const newPool = poolFactory(options, typesWithVector(vectorOid));
  // No JIT: the gateway runs short indexed statements, and a generous row estimate (a
  // function scan over request parameters, say) would otherwise make PostgreSQL spend
  // 100+ ms compiling a statement that executes in under one (measured at size L).
  const pool = newPool('-c jit=off');
  // The statements of GENERIC_PLAN_STATEMENTS run on connections that always use the generic
  // plan; the pool opens its connections on first use only.
  const genericPool = newPool('-c jit=off -c plan_cache_mode=force_generic_plan');
  const run = statementRunner();
  const poolFor = (sql: string) => (GENERIC_PLAN_STATEMENTS.has(statementName(sql)) ? genericPool : pool);
  return {
    backend: 'postgres',
    pool,
    connectionString: options.connectionString,
    load: () => ({
      pool: {
        total: pool.totalCount + genericPool.totalCount,
        idle: pool.idleCount + genericPool.idleCount,
        waiting: pool.waitingCount + genericPool.waitingCount,
      },
    }),
    query: (sql, params) => run(poolFor(sql), sql, params),
    transaction: (_name, fn) => inTransaction(pool, run, fn),
    async exec(sql) {
      await pool.query(sql);
    },
    session: (fn) => inSession(pool, run, fn),
    close: async () => {
      await Promise.all([pool.end(), genericPool.end()]);
    },
    listen: (channel, onPayload) => listenOn(options.connectionString, channel, onPayload),
  };
}

/**
 * Creates the extensions and answers the vector type's oid: the type must exist before its
 * parser can be registered (migrations repeat this harmlessly).
 */
async function ensureExtensions(connectionString: string): Promise<number> {
  const boot = new pg.Client({ connectionString });
  await boot.connect();
  try {
    await boot.query('CREATE EXTENSION IF NOT EXISTS vector');
    await boot.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    const { rows } = await boot.query<{ oid: number }>(
      `SELECT oid::int AS oid FROM pg_type WHERE typname = 'vector'`,
    );
    return rows[0]!.oid;
  } finally {
    await boot.end();
  }
}

/** pgvector's parser on every pooled connection, via the pool's type table (no per-connect query). */
function typesWithVector(vectorOid: number): { getTypeParser: typeof pg.types.getTypeParser } {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === vectorOid
        ? pgvector.fromSql
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

/** Pools of the gateway's connections, each with its session `settings`. */
function poolFactory(
  options: PostgresOptions,
  types: { getTypeParser: typeof pg.types.getTypeParser },
): (settings: string) => pg.Pool {
  return (settings) => {
    const p = new pg.Pool({
      connectionString: options.connectionString,
      max: options.max ?? 10,
      statement_timeout: options.statementTimeoutMs,
      application_name: 'memgate',
      options: settings,
      types,
    });
    // An idle client whose connection dies (a server restart, pg_terminate_backend, DROP DATABASE
    // … FORCE) is dropped by the pool and replaced on demand; without a listener its 'error' event
    // would be unhandled and end the process.
    p.on('error', () => undefined);
    return p;
  };
}

function statementRunner(): Run {
  const prepared = preparedNames();
  return async <R>(q: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    const values = params ? params.map(toParam) : [];
    const name = prepared(sql);
    const result = await (name ? q.query({ name, text: sql, values }) : q.query(sql, values));
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 } satisfies QueryResult<R>;
  };
}

/** `fn` between BEGIN and COMMIT on one pooled client; any throw rolls back. */
async function inTransaction<T>(pool: pg.Pool, run: Run, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const tx: Queryable = {
      query: (sql, params) => run(client, sql, params),
      copyFrom: async (sql, data) => {
        await pipeline(Readable.from([data]), client.query(copyFromStdin(sql)));
      },
    };
    const value = await fn(tx);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** `fn` on one pooled client outside any transaction; its settings are reset afterwards. */
async function inSession<T>(pool: pg.Pool, run: Run, fn: (q: Queryable) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn({ query: (sql, params) => run(client, sql, params) });
  } finally {
    await client.query('RESET ALL').catch(() => undefined);
    client.release();
  }
}

const RECONNECT_MS = 1000;

/** A dedicated client that stays LISTENing; a dropped connection is re-opened after a pause. */
async function listenOn(
  connectionString: string,
  channel: string,
  onPayload: (payload: string) => void,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  let stopped = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString, application_name: 'memgate-listen' });
    c.on('notification', (message) => {
      if (message.channel === channel && message.payload) onPayload(message.payload);
    });
    c.on('error', () => retry(c));
    c.on('end', () => retry(c));
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    client = c;
  };
  const retry = (broken: pg.Client) => {
    if (stopped || client !== broken || timer) return;
    client = null;
    void broken.end().catch(() => undefined);
    timer = setTimeout(() => {
      timer = null;
      void connect().catch(() => retry(broken));
    }, RECONNECT_MS);
    timer.unref();
  };
  await connect();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await (client as pg.Client | null)?.end().catch(() => undefined);
  };
}

/**
 * Statements on the hot paths of graph reads, `search` and `context`: parsed once per
 * connection, then only bound (PostgreSQL also keeps a generic plan when it costs no more than
 * planning each time, as it does for the lexical ranking). Measured at size L with
 * bench/explain-reads.ts --prepared: 10–20% off each of these statements.
 */
const PREPARED_STATEMENTS = new Set([
  'nestedEntityRead',
  'findEntitiesByKeys',
  'findFactsByIds',
  'findObservationsByIds',
  'findChunksByIds',
  'findHitChunks',
  'listEntities',
  'factsOfEntities',
  'countFactsOfEntities',
  'vectorChannel',
  'lexicalChannel',
  'exactChannel',
  'graphChannel',
  'contextFactsChannel',
  'contextRecentChannel',
  'contextHydrateCandidates',
  'contextMultiHop',
  'insertContextTraces',
]);

/**
 * Hot reads whose plan does not depend on their parameters' values, yet for which PostgreSQL
 * keeps planning a custom plan per execution (its generic-plan estimate over array and
 * recursive-CTE parameters looks dearer than it is): they run with plan_cache_mode =
 * force_generic_plan, so a prepared statement is planned once per connection. Measured at size
 * L with bench/explain-reads.ts --prepared --generic: the generic plans are the custom ones'
 * index scans, and planning (1–5 ms for the compiler's statements) was most of their time.
 * Never the vector channel: its generic plan cannot use the HNSW index (ORDER BY a parameter's
 * distance under a parameter LIMIT becomes a sequential scan, 200+ ms), nor the exact channel's
 * trigram patterns.
 */
export const GENERIC_PLAN_STATEMENTS: ReadonlySet<string> = new Set([
  'findHitChunks',
  'graphChannel',
  'contextFactsChannel',
  'contextRecentChannel',
  'contextHydrateCandidates',
  'contextMultiHop',
]);

/** At most this many distinct texts are prepared (each stays on every pooled connection). */
const MAX_PREPARED = 256;

/**
 * The statement name for a hot read's text, or null to run it unnamed. The name is a digest
 * of the text, so one name never stands for two texts; the set is bounded, as compiled nested
 * reads vary with the selection.
 */
function preparedNames(): (sql: string) => string | null {
  const names = new Map<string, string>();
  return (sql) => {
    const known = names.get(sql);
    if (known) return known;
    if (names.size >= MAX_PREPARED || !PREPARED_STATEMENTS.has(statementName(sql))) return null;
    const name = `mg_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
    return name;
  };
}
