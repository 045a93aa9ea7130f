import { withChangeOutbox } from './change-outbox.js';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { statementName } from './statement-capture.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFromStdin } from 'pg-copy-streams';
import pgvector from 'pgvector';
import { type Database, type QueryResult, type Queryable, type ReadReplicas, toParam } from './database.js';
import { unlessUnreachable } from './unavailable.js';
import { createReadReplicas, nodeName } from './read-replicas.js';

// int8 counts and ids fit in a double here; both backends then return numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export interface PostgresOptions {
  connectionString: string;
  statementTimeoutMs: number;
  max?: number;
  /** Streaming replicas of `connectionString` that serve reads (see read-replicas.ts). */
  readUrls?: readonly string[];
  /** A replica further behind than this serves no read that could go anywhere. */
  maxReplicaLagSeconds?: number;
}

export interface PostgresDatabase extends Database {
  readonly backend: 'postgres';
  pool: pg.Pool;
  /** Where the pool connects: pg_dump and restores open their own connection there. */
  connectionString: string;
}

export async function openPostgres(options: PostgresOptions): Promise<PostgresDatabase> {
  const vectorOid = await ensureExtensions(options.connectionString);
  const types = typesWithVector(vectorOid);
  const runner = statementRunner();
  const primary = openNode(options, options.connectionString, types, runner);
  const { pool } = primary;
  const listeners = createListeners(options.connectionString);
  const replicas = options.readUrls?.length ? await openReplicas(options, types, runner, primary) : undefined;
  return {
    backend: 'postgres',
    pool,
    connectionString: options.connectionString,
    load: () => ({
      pool: primary.load(),
      listener: listeners.state(),
      primary: nodeName(options.connectionString),
      ...(replicas ? { replicas: replicas.state() } : {}),
    }),
    query: primary.query,
    transaction: (_name, fn) => inTransaction(pool, runner.connect, runner.run, fn),
    async exec(sql) {
      await runner.runPooled(pool, sql);
    },
    session: (fn) => inSession(pool, runner.connect, runner.run, fn),
    close: async () => {
      await replicas?.close();
      await primary.close();
    },
    listen: (channel, onPayload) => listeners.listen(channel, onPayload),
    ...(replicas ? { replicas } : {}),
  };
}

type Types = { getTypeParser: typeof pg.types.getTypeParser };

/** One server's pools: the plain one and the generic-plan one, with what /metrics reads of them. */
function openNode(options: PostgresOptions, connectionString: string, types: Types, runner: Runner) {
  const newPool = poolFactory({ ...options, connectionString }, types);
  // No JIT: the gateway runs short indexed statements, and a generous row estimate (a
  // function scan over request parameters, say) would otherwise make PostgreSQL spend
  // 100+ ms compiling a statement that executes in under one (measured at size L).
  const pool = newPool('-c jit=off');
  // The statements of GENERIC_PLAN_STATEMENTS run on connections that always use the generic
  // plan; the pool opens its connections on first use only.
  const genericPool = newPool('-c jit=off -c plan_cache_mode=force_generic_plan');
  const poolFor = (sql: string) => (GENERIC_PLAN_STATEMENTS.has(statementName(sql)) ? genericPool : pool);
  return {
    pool,
    query: <R>(sql: string, params?: readonly unknown[]) => runner.runPooled<R>(poolFor(sql), sql, params),
    load: () => ({
      total: pool.totalCount + genericPool.totalCount,
      idle: pool.idleCount + genericPool.idleCount,
      waiting: pool.waitingCount + genericPool.waitingCount,
    }),
    close: async () => {
      await Promise.all([pool.end(), genericPool.end()]);
    },
  };
}

/**
 * The read replicas, each checked to be a standby of this primary (same system identifier):
 * a URL naming another cluster would serve another database's rows.
 */
async function openReplicas(
  options: PostgresOptions,
  types: Types,
  runner: Runner,
  primary: ReturnType<typeof openNode>,
): Promise<ReadReplicas> {
  const identity = await systemIdentifier(options.connectionString);
  const nodes = [];
  for (const url of options.readUrls ?? []) {
    const found = await systemIdentifier(url).catch(() => null);
    // An unreachable replica is not fatal (it may be restarting): it serves once it answers.
    if (found !== null && found !== identity) {
      await Promise.all(nodes.map((n) => n.node.close()));
      throw new Error(
        `MEMGATE_READ_DATABASE_URLS: ${nodeName(url)} is not a replica of DATABASE_URL (another cluster: system identifier ${found}, the primary's is ${identity})`,
      );
    }
    nodes.push({ name: nodeName(url), node: openNode(options, url, types, runner) });
  }
  return createReadReplicas(primary, nodes, { maxLagSeconds: options.maxReplicaLagSeconds ?? 30 });
}

async function systemIdentifier(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      'SELECT system_identifier::text AS id FROM pg_control_system()',
    );
    return rows[0]!.id;
  } finally {
    await client.end();
  }
}

/**
 * Creates the extensions and answers the vector type's oid: the type must exist before its
 * parser can be registered (migrations repeat this harmlessly).
 */
async function ensureExtensions(connectionString: string): Promise<number> {
  const boot = new pg.Client({ connectionString });
  await boot.connect();
  try {
    const { rows: recovery } = await boot.query<{ standby: boolean }>(
      'SELECT pg_is_in_recovery() AS standby',
    );
    if (recovery[0]?.standby) throw new StandbyError(nodeName(connectionString));
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

/** DATABASE_URL names a standby: memgate writes (migrations, LISTEN, every mutation), so it must not start there. */
export class StandbyError extends Error {
  constructor(name: string) {
    super(
      `DATABASE_URL (${name}) is a standby in recovery, which accepts no writes: point DATABASE_URL at the primary and list standbys in MEMGATE_READ_DATABASE_URLS to serve reads from them`,
    );
    this.name = 'StandbyError';
  }
}

/** pgvector's parser on every pooled connection, via the pool's type table (no per-connect query). */
function typesWithVector(vectorOid: number): Types {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === vectorOid
        ? pgvector.fromSql
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

/** Pools of the gateway's connections, each with its session `settings`. */
function poolFactory(options: PostgresOptions, types: Types): (settings: string) => pg.Pool {
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

/** Runs one statement on a client, as a prepared statement where that pays. */
type Run = <R>(q: pg.PoolClient, sql: string, params?: readonly unknown[]) => Promise<QueryResult<R>>;
type Connect = (p: pg.Pool) => Promise<pg.PoolClient>;

interface Runner {
  run: Run;
  connect: Connect;
  runPooled: <R>(p: pg.Pool, sql: string, params?: readonly unknown[]) => Promise<QueryResult<R>>;
}

/** How statements reach the server: on a client, on a pooled connection, and how one is taken. */
function statementRunner(): Runner {
  const prepared = preparedNames();
  const run: Run = async <R>(q: pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    const values = params ? params.map(toParam) : [];
    const name = prepared(sql);
    const result = await unlessUnreachable(() =>
      name ? q.query({ name, text: sql, values }) : q.query(sql, values),
    );
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 } satisfies QueryResult<R>;
  };
  // Any failure to obtain a connection means the database is unreachable (refused, not
  // accepting connections, starting up, out of connection slots).
  const guarded = new WeakSet<pg.PoolClient>();
  const connect: Connect = async (p) => {
    const client = await unlessUnreachable(() => p.connect(), true);
    // A connection that dies while checked out but between statements (a transaction waiting
    // on its caller) reports an 'error' event, which would end the process unheard; its next
    // statement fails instead (UNAVAILABLE) and the pool drops it on release.
    if (!guarded.has(client)) {
      client.on('error', () => undefined);
      guarded.add(client);
    }
    return client;
  };
  /** One statement on a pooled connection; as pool.query does, a failed one is not reused. */
  const runPooled = async <R>(p: pg.Pool, sql: string, params?: readonly unknown[]) => {
    const client = await connect(p);
    try {
      const result = await run<R>(client, sql, params);
      client.release();
      return result;
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  };
  return { run, connect, runPooled };
}

/** `fn` between BEGIN and COMMIT on one pooled client; any throw rolls back. */
async function inTransaction<T>(
  pool: pg.Pool,
  connect: Connect,
  run: Run,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const client = await connect(pool);
  try {
    await unlessUnreachable(() => client.query('BEGIN'));
    const tx: Queryable = {
      query: (sql, params) => run(client, sql, params),
      copyFrom: async (sql, data) => {
        await pipeline(Readable.from([data]), client.query(copyFromStdin(sql)));
      },
    };
    const value = await withChangeOutbox(tx, () => fn(tx));
    await unlessUnreachable(() => client.query('COMMIT'));
    return value;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** `fn` on one pooled client outside any transaction; its settings are reset afterwards. */
async function inSession<T>(
  pool: pg.Pool,
  connect: Connect,
  run: Run,
  fn: (q: Queryable) => Promise<T>,
): Promise<T> {
  const client = await connect(pool);
  try {
    return await fn({ query: (sql, params) => run(client, sql, params) });
  } finally {
    await client.query('RESET ALL').catch(() => undefined);
    client.release();
  }
}

/** The first pause before re-opening a dropped LISTEN connection; it doubles up to the most. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MOST_MS = 5000;

/** The state of this process's LISTEN connections, reported by /readyz and /metrics. */
export interface ListenerState {
  /** Every LISTEN connection is open and listening. */
  listening: boolean;
  /** Connections re-opened after a loss, since start. */
  reconnects: number;
}

/** The LISTEN connections of one pool: each reports whether it is up. */
function createListeners(connectionString: string) {
  const up = new Map<string, boolean>();
  let reconnects = 0;
  return {
    state: (): ListenerState => ({ listening: [...up.values()].every(Boolean), reconnects }),
    async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
      const stop = await listenOn(connectionString, channel, onPayload, {
        up: (isUp) => up.set(channel, isUp),
        reconnected: () => {
          reconnects += 1;
        },
      });
      return async () => {
        await stop();
        up.delete(channel);
      };
    },
  };
}

interface ListenerEvents {
  up(isUp: boolean): void;
  reconnected(): void;
}

/**
 * A dedicated client that stays LISTENing. A dropped connection (a restart, a failover, a
 * terminated backend) is re-opened after a pause that doubles from 250 ms to 5 s, for as long
 * as it takes, until stopped. Notices sent while it was down are lost: subscribers re-read.
 */
async function listenOn(
  connectionString: string,
  channel: string,
  onPayload: (payload: string) => void,
  events: ListenerEvents,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  let stopped = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let pause = RECONNECT_FIRST_MS;

  const open = async (): Promise<void> => {
    const c = new pg.Client({ connectionString, application_name: 'memgate-listen' });
    c.on('notification', (message) => {
      if (message.channel === channel) onPayload(message.payload ?? '');
    });
    // Both may fire for one loss, before or after the connection was ever up.
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (error) {
      lost(c);
      throw error;
    }
    if (stopped) {
      await c.end().catch(() => undefined);
      return;
    }
    client = c;
    pause = RECONNECT_FIRST_MS;
    events.up(true);
  };
  const lost = (broken: pg.Client) => {
    void broken.end().catch(() => undefined);
    if (client === broken) client = null;
    else if (client !== null) return; // an older client's late event: the current one is fine
    events.up(false);
    schedule();
  };
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      open().then(events.reconnected, () => undefined);
    }, pause);
    pause = Math.min(pause * 2, RECONNECT_MOST_MS);
    timer.unref();
  };

  try {
    await open();
  } catch (error) {
    stopped = true; // the caller learns of the failure; nothing keeps retrying behind it
    if (timer) clearTimeout(timer);
    throw error;
  }
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    const c = client;
    client = null;
    await c?.end().catch(() => undefined);
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
  'currentState',
  'contextHydrateCandidates',
  'contextMultiHop',
  'insertContextTraces',
  'matchAnchorCandidates',
  'typedTraversalLevel',
  'typedEntitiesAsOf',
  'insertTypedTraces',
  'loadNamespacePacks',
]);

/**
 * Hot reads whose plan does not depend on their parameters' values, yet for which PostgreSQL
 * keeps planning a custom plan per execution (its generic-plan estimate over array and
 * recursive-CTE parameters looks dearer than it is): they run with plan_cache_mode =
 * force_generic_plan, so a prepared statement is planned once per connection. Measured at size
 * L with bench/explain-reads.ts --prepared --generic: the generic plans are the custom ones'
 * index scans, and planning (1–5 ms for the compiler's statements) was most of their time;
 * currentState's plan took 1.9 ms at size L and up to 10 ms at S to make, its generic plan runs
 * in 1.7 ms where the custom one took 6.1 (planning included). typedContext's anchor match and
 * traversal levels likewise (2.1 → 0.8 ms and 6.7 → 4.6 ms for three levels at size L).
 * Never the vector channel: its generic plan cannot use the HNSW index (ORDER BY a parameter's
 * distance under a parameter LIMIT becomes a sequential scan, 200+ ms), nor the exact channel's
 * trigram patterns.
 */
export const GENERIC_PLAN_STATEMENTS: ReadonlySet<string> = new Set([
  'findHitChunks',
  'graphChannel',
  'contextFactsChannel',
  'contextRecentChannel',
  'currentState',
  'contextHydrateCandidates',
  'contextMultiHop',
  'matchAnchorCandidates',
  'typedTraversalLevel',
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
