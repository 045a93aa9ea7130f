import { z } from 'zod';
import { normaliseTextSearch } from './domain/text-search.js';

/** Every setting comes from the environment, parsed once; `loadConfig` lists every problem at once. */
const booleanFlag = z
  .enum(['0', '1', 'true', 'false', 'yes', 'no', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

/** A switch that is on unless set to 0, false, no. */
const onUnlessOff = z
  .enum(['0', '1', 'true', 'false', 'yes', 'no', ''])
  .optional()
  .transform((v) => !(v === '0' || v === 'false' || v === 'no'));

const envSchema = z.object({
  MEMGATE_HOST: z.string().min(1).default('127.0.0.1'),
  MEMGATE_PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  MEMGATE_DATA_DIR: z.string().min(1).default('./.memgate'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  MEMGATE_READ_DATABASE_URLS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^postgres(ql)?:\/\//, 'each must be a postgres:// or postgresql:// URL')))
    .optional(),
  MEMGATE_READ_YOUR_WRITES_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  MEMGATE_REPLICA_MAX_LAG_S: z.coerce.number().min(0).max(86_400).default(30),
  MEMGATE_EMBEDDER: z.string().min(1).default('offline'),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  MEMGATE_LLM: z.string().min(1).optional(),
  MEMGATE_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  MEMGATE_TRACE_SQL: booleanFlag,
  MEMGATE_TOKENS_FILE: z.string().min(1).optional(),
  MEMGATE_PRODUCTION: booleanFlag,
  MEMGATE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  MEMGATE_SUBSCRIPTION_QUEUE: z.coerce.number().int().min(1).max(100_000).default(1000),
  MEMGATE_MAX_SUBSCRIPTIONS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  MEMGATE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL: z.coerce.number().int().min(1).max(1_000_000).default(50),
  MEMGATE_TRACE_RETENTION_DAYS: z.coerce.number().min(0).default(30),
  MEMGATE_CHARS_PER_TOKEN: z.coerce.number().positive().max(20).default(3),
  MEMGATE_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(8 * 1024 * 1024),
  MEMGATE_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(500).max(3_600_000).default(30_000),
  MEMGATE_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(5_000),
  MEMGATE_MAX_DEPTH: z.coerce.number().int().min(2).max(100).default(12),
  MEMGATE_MAX_ALIASES: z.coerce.number().int().min(0).max(1000).default(30),
  MEMGATE_MAX_COST: z.coerce.number().int().min(10).default(50_000),
  MEMGATE_MAX_LIST_SIZE: z.coerce.number().int().min(1).default(1000),
  MEMGATE_PERSISTED_OPERATIONS: z.string().min(1).optional(),
  MEMGATE_TEXT_SEARCH: z
    .string()
    .transform((v) => normaliseTextSearch(v))
    .refine((v) => v !== null, 'must be auto or a text-search configuration name (english, russian, simple…)')
    .default('english'),
  MEMGATE_METRICS: onUnlessOff,
  MEMGATE_SUMMARIES: onUnlessOff,
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
});

export type EnvInput = Record<string, string | undefined>;

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Streaming replicas of DATABASE_URL that serve queries; empty: the primary serves everything. */
  readDatabaseUrls: string[];
  /** After a principal's write, its reads go only where that write is visible, for this long. */
  readYourWritesMs: number;
  /** A replica further behind than this serves no read (reads needing a write's LSN wait for none). */
  replicaMaxLagSeconds: number;
  embedder: string;
  openaiApiKey: string | undefined;
  openaiBaseUrl: string | undefined;
  llm: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  traceSql: boolean;
  tokensFile: string | undefined;
  production: boolean;
  statementTimeoutMs: number;
  /** Changes one live subscriber may have pending; beyond it the subscription ends (LIMIT_EXCEEDED). */
  subscriptionQueue: number;
  /** Open subscriptions the process accepts; one more gets LIMIT_EXCEEDED. */
  maxSubscriptions: number;
  /** Open subscriptions one principal may hold; one more gets LIMIT_EXCEEDED. */
  maxSubscriptionsPerPrincipal: number;
  traceRetentionDays: number;
  charsPerToken: number;
  maxBodyBytes: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  maxListSize: number;
  persistedOperations: string | undefined;
  /** Text-search configuration of namespaces that set none: a pg_ts_config name or `auto`. */
  textSearch: string;
  /** Serve Prometheus metrics on /metrics (admin token needed when a tokens file is set). */
  metrics: boolean;
  /** Export OpenTelemetry traces over OTLP/HTTP (the exporter reads the OTEL_* variables). */
  otlpTracing: boolean;
  /** Keep entity summaries refreshed from this process as their evidence changes. */
  summaries: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function parseConfig(env: EnvInput): Config {
  // Empty strings mean "unset" so `FOO= memgate` behaves like an absent variable.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  if (e.MEMGATE_READ_DATABASE_URLS?.length && !e.DATABASE_URL) {
    throw new ConfigError([
      'MEMGATE_READ_DATABASE_URLS: read replicas need DATABASE_URL (the primary); the embedded database has none',
    ]);
  }
  return {
    host: e.MEMGATE_HOST,
    port: e.MEMGATE_PORT,
    dataDir: e.MEMGATE_DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    readDatabaseUrls: e.MEMGATE_READ_DATABASE_URLS ?? [],
    readYourWritesMs: e.MEMGATE_READ_YOUR_WRITES_MS,
    replicaMaxLagSeconds: e.MEMGATE_REPLICA_MAX_LAG_S,
    embedder: e.MEMGATE_EMBEDDER,
    openaiApiKey: e.OPENAI_API_KEY,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    llm: e.MEMGATE_LLM,
    logLevel: e.MEMGATE_LOG_LEVEL,
    traceSql: e.MEMGATE_TRACE_SQL,
    tokensFile: e.MEMGATE_TOKENS_FILE,
    production: e.MEMGATE_PRODUCTION,
    statementTimeoutMs: e.MEMGATE_STATEMENT_TIMEOUT_MS,
    subscriptionQueue: e.MEMGATE_SUBSCRIPTION_QUEUE,
    maxSubscriptions: e.MEMGATE_MAX_SUBSCRIPTIONS,
    maxSubscriptionsPerPrincipal: e.MEMGATE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL,
    traceRetentionDays: e.MEMGATE_TRACE_RETENTION_DAYS,
    charsPerToken: e.MEMGATE_CHARS_PER_TOKEN,
    maxBodyBytes: e.MEMGATE_MAX_BODY_BYTES,
    requestTimeoutMs: e.MEMGATE_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.MEMGATE_KEEP_ALIVE_TIMEOUT_MS,
    maxDepth: e.MEMGATE_MAX_DEPTH,
    maxAliases: e.MEMGATE_MAX_ALIASES,
    maxCost: e.MEMGATE_MAX_COST,
    maxListSize: e.MEMGATE_MAX_LIST_SIZE,
    persistedOperations: e.MEMGATE_PERSISTED_OPERATIONS,
    textSearch: e.MEMGATE_TEXT_SEARCH ?? 'english',
    metrics: e.MEMGATE_METRICS,
    otlpTracing: Boolean(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
    summaries: e.MEMGATE_SUMMARIES,
  };
}

/** The variables `memgate --help` documents, in the order of the README table. */
export const ENV_DOCS: ReadonlyArray<[string, string, string]> = [
  ['MEMGATE_HOST', '127.0.0.1', 'address to bind; without a tokens file only loopback is allowed'],
  ['MEMGATE_PORT', '4000', 'HTTP port'],
  ['MEMGATE_DATA_DIR', './.memgate', 'embedded database (PGlite) and embedding cache directory'],
  ['DATABASE_URL', '(unset)', 'PostgreSQL ≥ 15 with pgvector; when set, PGlite is not used'],
  [
    'MEMGATE_READ_DATABASE_URLS',
    '(unset)',
    'comma-separated streaming replicas of DATABASE_URL; queries are read there',
  ],
  [
    'MEMGATE_READ_YOUR_WRITES_MS',
    '10000',
    "after a principal's write, its reads go only to nodes that have replayed it, this long",
  ],
  ['MEMGATE_REPLICA_MAX_LAG_S', '30', 'a replica further behind than this serves no reads'],
  ['MEMGATE_EMBEDDER', 'offline', 'offline | openai:<model>[:<dims>] | hashing[:<dims>] (tests only)'],
  ['OPENAI_API_KEY', '(unset)', 'key for the OpenAI-compatible embedder and LLM'],
  ['OPENAI_BASE_URL', '(unset)', 'base URL of any OpenAI-compatible server'],
  ['MEMGATE_LLM', '(unset = echo)', 'echo | openai:<model> — rerank, synthesis, intent routing'],
  ['MEMGATE_LOG_LEVEL', 'info', 'debug | info | warn | error | silent'],
  ['MEMGATE_TRACE_SQL', '0', '1 adds extensions.sql = { statements, ms } to every response'],
  ['MEMGATE_TOKENS_FILE', '(unset = local mode)', 'JSON file of principals (bearer token SHA-256 hashes)'],
  ['MEMGATE_TOKEN', '(unset)', '`memgate mcp` only: bearer token of the principal the agent acts as'],
  ['MEMGATE_PRODUCTION', '0', '1 disables introspection and GraphiQL'],
  ['MEMGATE_STATEMENT_TIMEOUT_MS', '15000', 'per-statement database timeout'],
  ['MEMGATE_SUBSCRIPTION_QUEUE', '1000', 'changes a live subscriber may have pending before it is dropped'],
  ['MEMGATE_MAX_SUBSCRIPTIONS', '1000', 'open subscriptions the process accepts (more: LIMIT_EXCEEDED)'],
  [
    'MEMGATE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL',
    '50',
    'open subscriptions one principal may hold (more: LIMIT_EXCEEDED)',
  ],
  ['MEMGATE_TRACE_RETENTION_DAYS', '30', 'context traces older than this are pruned'],
  ['MEMGATE_CHARS_PER_TOKEN', '3', 'token estimate = ceil(characters / this)'],
  ['MEMGATE_MAX_BODY_BYTES', '8388608', 'largest accepted request body'],
  ['MEMGATE_REQUEST_TIMEOUT_MS', '30000', 'time to receive a whole request (headers within 10 s)'],
  ['MEMGATE_KEEP_ALIVE_TIMEOUT_MS', '5000', 'an idle keep-alive connection is closed after this'],
  ['MEMGATE_MAX_DEPTH', '12', 'deepest field nesting of an operation (LIMIT_EXCEEDED beyond)'],
  ['MEMGATE_MAX_ALIASES', '30', 'aliased fields per operation, fragments expanded'],
  ['MEMGATE_MAX_COST', '50000', 'estimated objects per operation (lists × page sizes)'],
  ['MEMGATE_MAX_LIST_SIZE', '1000', 'longest list in any argument (ids, batch items…)'],
  ['MEMGATE_PERSISTED_OPERATIONS', '(unset)', 'JSON file of allowed operations; others are refused'],
  [
    'MEMGATE_TEXT_SEARCH',
    'english',
    'language of namespaces that set none: auto | russian | english | simple | …',
  ],
  [
    'MEMGATE_METRICS',
    '1',
    'Prometheus metrics on /metrics (admin token with a tokens file); 0 turns them off',
  ],
  ['MEMGATE_SUMMARIES', '1', '0 stops this process refreshing entity summaries (reads still build them)'],
  [
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    '(unset = no traces)',
    'OTLP/HTTP collector URL; traces are exported there',
  ],
];
