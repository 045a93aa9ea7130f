import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * memgate's own Prometheus metrics (the GraphQL ones come from the yoga plugin, on the same
 * registry). Every label value is drawn from a set fixed by the code: statement names from
 * the `/* queryName *\/` comments, channel and stage names, enum statuses and error codes.
 * Namespaces, keys, queries and other caller text never become labels.
 */
export interface Metrics {
  registry: Registry;
  sqlDuration: Histogram<'statement'>;
  sqlRows: Counter<'statement'>;
  requestSqlStatements: Histogram<'operationType' | 'rootField'>;
  requestSqlSeconds: Histogram<'operationType' | 'rootField'>;
  pgliteQueueWait: Histogram;
  channelDuration: Histogram<'pipeline' | 'channel' | 'status'>;
  channelFailures: Counter<'pipeline' | 'channel' | 'reason'>;
  stageDuration: Histogram<'stage'>;
  contextTokensUsed: Histogram;
  contextItemsDropped: Counter<'reason'>;
  ingestRows: Counter<'mutation' | 'status'>;
}

/** What the database reports on scrape: pool clients (node-postgres) or the PGlite queue. */
export interface DatabaseLoad {
  pool?: { total: number; idle: number; waiting: number };
  queue?: { depth: number };
  /** Native PostgreSQL: the LISTEN connection whose wake-ups make the change feed read the outbox. */
  listener?: { listening: boolean; reconnects: number };
  /** Native PostgreSQL: host:port/database of the primary (DATABASE_URL, no credentials). */
  primary?: string;
  /** Native PostgreSQL with read replicas: each one's state at its last sample. */
  replicas?: ReplicaLoad[];
}

/** What /readyz and /metrics say about one read replica. */
export interface ReplicaLoad {
  /** host:port/database of the replica (no credentials). */
  name: string;
  /** Answered its last sample and is in recovery (a standby). */
  up: boolean;
  /** WAL replayed, as PostgreSQL prints an LSN; null until sampled. */
  replayLsn: string | null;
  /** Bytes of the primary's WAL not yet replayed there (at the last sample). */
  lagBytes: number | null;
  /** Seconds since the last replayed transaction's commit; 0 when caught up. */
  lagSeconds: number | null;
}

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(load: () => DatabaseLoad): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const pool = load().pool !== undefined;
  registerLoadGauges(load, pool ? registers : [], pool ? [] : registers);
  // Registered in this order, which is the order a scrape lists them in.
  return {
    registry,
    ...databaseMetrics(registers, pool ? [] : registers),
    ...retrievalMetrics(registers),
    ingestRows: new Counter({
      name: 'memgate_ingest_rows_total',
      help: 'Batch write items by mutation and per-item status',
      labelNames: ['mutation', 'status'],
      registers,
    }),
  };
}

/** The database's load, read on scrape: pool clients (node-postgres) or the PGlite queue. */
function registerLoadGauges(
  load: () => DatabaseLoad,
  poolRegisters: Registry[],
  pgliteRegisters: Registry[],
): void {
  new Gauge({
    name: 'memgate_db_pool_clients',
    help: 'node-postgres pool clients by state (total, idle, waiting); absent on PGlite',
    labelNames: ['state'],
    registers: poolRegisters,
    collect() {
      const p = load().pool;
      if (!p) return;
      this.set({ state: 'total' }, p.total);
      this.set({ state: 'idle' }, p.idle);
      this.set({ state: 'waiting' }, p.waiting);
    },
  });
  new Gauge({
    name: 'memgate_db_listener_up',
    help: 'Whether the LISTEN connection that wakes the change feed is open (1) or being re-opened (0); absent on PGlite',
    registers: poolRegisters,
    collect() {
      const listener = load().listener;
      if (listener) this.set(listener.listening ? 1 : 0);
    },
  });
  new Gauge({
    name: 'memgate_db_listener_reconnects',
    help: 'Times the LISTEN connection was re-opened after a loss, since start; absent on PGlite',
    registers: poolRegisters,
    collect() {
      const listener = load().listener;
      if (listener) this.set(listener.reconnects);
    },
  });
  registerReplicaGauges(load, poolRegisters);
  new Gauge({
    name: 'memgate_pglite_queue_depth',
    help: 'Statements and transactions waiting for the single PGlite connection',
    registers: pgliteRegisters,
    collect() {
      this.set(load().queue?.depth ?? 0);
    },
  });
}

/** Each read replica's state at its last sample (MEMGATE_READ_DATABASE_URLS); absent without replicas. */
function registerReplicaGauges(load: () => DatabaseLoad, registers: Registry[]): void {
  const perReplica = (name: string, help: string, value: (r: ReplicaLoad) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const replica of load().replicas ?? []) {
          const v = value(replica);
          if (v !== null) this.set({ replica: replica.name }, v);
        }
      },
    });
  perReplica(
    'memgate_db_replica_up',
    'Whether a read replica answered its last sample as a standby (1) or not (0)',
    (r) => (r.up ? 1 : 0),
  );
  perReplica(
    'memgate_db_replica_lag_bytes',
    "Bytes of the primary's WAL a read replica has not replayed",
    (r) => r.lagBytes,
  );
  perReplica(
    'memgate_db_replica_lag_seconds',
    'Seconds since the last transaction a read replica replayed was committed; 0 when caught up',
    (r) => r.lagSeconds,
  );
}

const byContext = ['operationType', 'rootField'] as const;

/** Statements by name, SQL per request, and the PGlite queue wait (registered on PGlite only). */
function databaseMetrics(
  registers: Registry[],
  pgliteRegisters: Registry[],
): Pick<
  Metrics,
  'sqlDuration' | 'sqlRows' | 'requestSqlStatements' | 'requestSqlSeconds' | 'pgliteQueueWait'
> {
  return {
    sqlDuration: new Histogram({
      name: 'memgate_sql_statement_duration_seconds',
      help: 'SQL statement duration by statement name (its /* queryName */ comment)',
      labelNames: ['statement'],
      buckets: SECONDS,
      registers,
    }),
    sqlRows: new Counter({
      name: 'memgate_sql_rows_total',
      help: 'Rows returned or affected, by statement name',
      labelNames: ['statement'],
      registers,
    }),
    requestSqlStatements: new Histogram({
      name: 'memgate_request_sql_statements',
      help: 'SQL statements per GraphQL request',
      labelNames: byContext,
      buckets: [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144],
      registers,
    }),
    requestSqlSeconds: new Histogram({
      name: 'memgate_request_sql_seconds',
      help: 'Summed SQL time per GraphQL request (statements may overlap)',
      labelNames: byContext,
      buckets: SECONDS,
      registers,
    }),
    pgliteQueueWait: new Histogram({
      name: 'memgate_pglite_queue_wait_seconds',
      help: 'Time a statement or transaction waited for the single PGlite connection',
      buckets: SECONDS,
      registers: pgliteRegisters,
    }),
  };
}

/** Retrieval channels, context compiler stages, and what compiled packs used and dropped. */
function retrievalMetrics(
  registers: Registry[],
): Pick<
  Metrics,
  'channelDuration' | 'channelFailures' | 'stageDuration' | 'contextTokensUsed' | 'contextItemsDropped'
> {
  return {
    channelDuration: new Histogram({
      name: 'memgate_retrieval_channel_duration_seconds',
      help: 'Retrieval channel duration by pipeline (search, context), channel and status',
      labelNames: ['pipeline', 'channel', 'status'],
      buckets: SECONDS,
      registers,
    }),
    channelFailures: new Counter({
      name: 'memgate_retrieval_channel_failures_total',
      help: 'Retrieval channels that failed or timed out (the read answered degraded)',
      labelNames: ['pipeline', 'channel', 'reason'],
      registers,
    }),
    stageDuration: new Histogram({
      name: 'memgate_context_stage_duration_seconds',
      help: 'Context compiler stage duration',
      labelNames: ['stage'],
      buckets: SECONDS,
      registers,
    }),
    contextTokensUsed: new Histogram({
      name: 'memgate_context_tokens_used',
      help: 'Tokens used by each compiled ContextPack',
      buckets: [0, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768],
      registers,
    }),
    contextItemsDropped: new Counter({
      name: 'memgate_context_items_dropped_total',
      help: 'ContextPack candidates dropped, by reason',
      labelNames: ['reason'],
      registers,
    }),
  };
}

/**
 * A gauge a feature reads on scrape, from the database (queue depths and ages): each sample a
 * value with labels drawn from a set fixed by the code. A read that fails leaves the gauge
 * empty for that scrape; the scrape itself still answers.
 */
export interface ScrapeGauge<L extends string = string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  read(): Promise<readonly { labels?: Partial<Record<L, string>>; value: number }[]>;
}

/**
 * A feature's metrics: counters it declares up front (so a scrape lists them before their
 * first event) and gauges it reads on scrape.
 */
export interface FeatureMetrics {
  declare?(registry: Registry): void;
  gauges?: readonly ScrapeGauge[];
}

/** Declares each feature's metrics on the registry and registers its scrape gauges. */
export function registerFeatureMetrics(metrics: Metrics, features: readonly FeatureMetrics[]): void {
  for (const feature of features) feature.declare?.(metrics.registry);
  registerScrapeGauges(
    metrics,
    features.flatMap((f) => f.gauges ?? []),
  );
}

/** What each registered scrape gauge reads: the newest gateway's (a process may hold several). */
const scrapeReads = new WeakMap<Registry, Map<string, ScrapeGauge['read']>>();

/** Registers `gauges` on the metrics registry (once per name), reading through these from now on. */
function registerScrapeGauges(metrics: Metrics, gauges: readonly ScrapeGauge[]): void {
  let reads = scrapeReads.get(metrics.registry);
  if (!reads) {
    reads = new Map();
    scrapeReads.set(metrics.registry, reads);
  }
  for (const gauge of gauges) {
    const known = reads.has(gauge.name);
    reads.set(gauge.name, gauge.read);
    if (known) continue;
    const readOf = reads;
    new Gauge({
      name: gauge.name,
      help: gauge.help,
      labelNames: gauge.labelNames ?? [],
      registers: [metrics.registry],
      async collect() {
        this.reset();
        const samples = await readOf.get(gauge.name)!().catch(() => []);
        for (const s of samples) this.set(s.labels ?? {}, s.value);
      },
    });
  }
}

// Metrics are per process, like prom-client's default registry: the hooks in the database,
// the channel runners and the compiler find them here instead of being handed them.
let created: Metrics | null = null;
let active: Metrics | null = null;
let currentLoad: () => DatabaseLoad = () => ({});

export function activeMetrics(): Metrics | null {
  return active;
}

/** Turns metrics on for this process (idempotent: a second gateway shares the registry). */
export function enableMetrics(load: () => DatabaseLoad): Metrics {
  // The registry is the process's, and outlives a gateway: scrapes read the database of the
  // gateway enabled last, not the first one (which may be closed by now).
  currentLoad = load;
  created ??= createMetrics(() => currentLoad());
  active = created;
  return active;
}

/** Stops recording (tests, the benchmark's on/off comparison); enableMetrics resumes it. */
export function disableMetrics(): void {
  active = null;
}

/** A code-chosen name, or `other`: guards a label against anything unexpected. */
export function boundedLabel(value: string | undefined | null, max = 64): string {
  if (!value) return 'none';
  return value.length <= max && /^[A-Za-z_][A-Za-z0-9_.:-]*$/.test(value) ? value : 'other';
}
