/**
 * The gateway under test, in its own process (so its RSS is its own): the real app and HTTP
 * server (`src/app.ts`, `src/http.ts`) on 127.0.0.1:0 over the run's throwaway database, with
 * SQL tracing on. The parent talks to it over IPC: statement capture and replay (the SQL
 * floor), a few SQL reads (counts, sizes), memory, stop. Started with MEMGATE_BENCH_MODEL_URL,
 * it can also serve as a gateway with an OpenAI-compatible model configured at that URL, and
 * run that gateway's model-extraction worker on request.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import type { TracerProvider } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { openPglite } from '../src/db/pglite-database.js';
import { openPostgres } from '../src/db/postgres-database.js';
import { createHttpServer } from '../src/http.js';
import { disableMetrics, enableMetrics } from '../src/observability/metrics.js';
import {
  activeTracerProvider,
  disableTracing,
  enableTracing,
  startOtlpTracing,
} from '../src/observability/tracing.js';
import { ExtractionWorker } from '../src/modules/extraction/index.js';
import { llmFor } from '../src/providers/llm.js';
import { type Gateway, createGateway } from '../src/server.js';
import { StatementCapture } from './capture.js';
import { FloorReplay } from './floor-replay.js';
import { type Location, pgliteDir } from './database.js';

export type ChildRequest =
  | { type: 'capture-start' }
  /** `keep`: the request's statements join the floor's set (floor-replay.ts). */
  | { type: 'capture-stop'; keep?: boolean }
  | { type: 'captured-statements' }
  | { type: 'floor-clear' }
  /** Every kept request replayed once, one after another. */
  | { type: 'floor-replay-each' }
  | { type: 'floor-throughput'; concurrency: number; durationMs: number }
  | { type: 'query'; sql: string; params?: unknown[] }
  /** One statement inside a transaction that is rolled back: its milliseconds, the database's only. */
  | { type: 'rolled-back'; sql: string; params?: unknown[] }
  | { type: 'memory' }
  /**
   * Serve with metrics and tracing off, on as shipped (the default sampler), or on with every
   * request traced (started with MEMGATE_BENCH_OBSERVABILITY=1).
   */
  | { type: 'observability'; mode: ObservabilityMode }
  /** Serve as the gateway with a model configured or as the plain one (MEMGATE_BENCH_MODEL_URL). */
  | { type: 'model-extraction'; on: boolean }
  /** Run the model-extraction worker until nothing is ready (MEMGATE_BENCH_MODEL_URL). */
  | { type: 'drain-extraction' }
  /** A V8 CPU profile of the gateway between the two requests (written as a .cpuprofile file). */
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'stop' };

export type ObservabilityMode = 'off' | 'on' | 'full';

/** What one drain of the model-extraction queue did. */
export interface ExtractionDrain {
  rounds: number;
  jobs: number;
  facts: number;
  /** Jobs given back (to retry later) or dead. */
  failed: number;
}

export interface ChildMemory {
  /** User + system CPU time of the gateway process so far. */
  cpuMs: number;
  rssBytes: number;
  maxRssBytes: number;
  heapUsedBytes: number;
}

const location = JSON.parse(process.env.MEMGATE_BENCH_LOCATION ?? 'null') as Location | null;
const cacheDir = process.env.MEMGATE_BENCH_CACHE_DIR ?? '.test-cache';
if (!location || !process.send) {
  process.stderr.write(
    'bench/gateway-child.ts is started by the benchmark runner (IPC and a location needed)\n',
  );
  process.exit(2);
}
const send = process.send.bind(process);

const raw: Database =
  location.backend === 'pglite'
    ? await openPglite({ dataDir: pgliteDir(location.dir) })
    : await openPostgres({ connectionString: location.url, statementTimeoutMs: 15_000 });
const capture = new StatementCapture(raw);
const floor = new FloorReplay(raw);
const config = parseConfig({
  MEMGATE_TRACE_SQL: '1',
  MEMGATE_LOG_LEVEL: 'warn',
  MEMGATE_DATA_DIR: cacheDir,
  MEMGATE_EMBEDDER: 'offline',
  ...(location.backend === 'postgres' ? { DATABASE_URL: location.url } : {}),
  // Settings the runner changed from the defaults (reported with the figures).
  ...(JSON.parse(process.env.MEMGATE_BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>),
});
const app = await createApp(config, { db: capture.db });
const observed = process.env.MEMGATE_BENCH_OBSERVABILITY === '1' ? await observedGateway() : null;
const withModel = process.env.MEMGATE_BENCH_MODEL_URL
  ? modelGateway(process.env.MEMGATE_BENCH_MODEL_URL)
  : null;
let current: Gateway = app.gateway;
const server = createHttpServer({
  // Either gateway, switched between runs: the same process, database and warm caches.
  gateway: { handle: (req, res) => current.handle(req, res) },
  authenticate: app.authenticate,
  db: capture.db,
  logger: app.deps.logger,
  maxBodyBytes: config.maxBodyBytes,
  requestTimeoutMs: config.requestTimeoutMs,
  // The load generator keeps its connections between phases.
  keepAliveTimeoutMs: 60_000,
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

/**
 * A second gateway over the same app with /metrics and OpenTelemetry on: spans go through the
 * real OTLP/HTTP exporter to the parent's sink (OTEL_EXPORTER_OTLP_ENDPOINT), sampled as
 * shipped (`on`) or all of them (`full`, a second provider). Built after the plain one, which
 * therefore has no observability plugins at all; both start switched off.
 */
async function observedGateway(): Promise<{ gateway: Gateway; on: TracerProvider; full: TracerProvider }> {
  await startOtlpTracing('memgate-bench');
  const on = activeTracerProvider()!;
  const full = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'memgate-bench' }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const gateway = createGateway({ ...app.deps, config: { ...config, metrics: true } });
  disableTracing();
  disableMetrics();
  return { gateway, on, full };
}

/**
 * A second gateway over the same app whose configuration names an OpenAI-compatible model at
 * `url` (MEMGATE_LLM=openai:<name>, OPENAI_BASE_URL=url), as a gateway started with those
 * settings is: its writes queue model extraction. Its worker (the one `createApp` would start)
 * runs when asked to drain the queue: the rounds its poll loop runs, until nothing is ready.
 */
function modelGateway(url: string): { gateway: Gateway; worker: ExtractionWorker } {
  const modelConfig = {
    ...config,
    llm: `openai:${process.env.MEMGATE_BENCH_MODEL ?? 'bench-extraction'}`,
    openaiBaseUrl: url,
  };
  const llm = llmFor(modelConfig);
  return {
    gateway: createGateway({ ...app.deps, config: modelConfig }),
    worker: new ExtractionWorker(capture.db, llm, app.deps.logger),
  };
}

function switchModel(on: boolean): void {
  if (!withModel) throw new Error('started without MEMGATE_BENCH_MODEL_URL');
  current = on ? withModel.gateway : app.gateway;
}

async function drainExtraction(): Promise<ExtractionDrain> {
  if (!withModel) throw new Error('started without MEMGATE_BENCH_MODEL_URL');
  const drained: ExtractionDrain = { rounds: 0, jobs: 0, facts: 0, failed: 0 };
  for (const outcome of await withModel.worker.drain(null)) {
    drained.rounds += 1;
    if (outcome.kind === 'idle') continue;
    drained.jobs += outcome.jobs;
    if (outcome.kind === 'done') drained.facts += outcome.facts;
    else drained.failed += outcome.jobs;
  }
  return drained;
}

/**
 * Off is as a process started without metrics or an OTLP endpoint (the context manager, idle
 * while no sampled request is in flight, costs nothing then either).
 */
function switchObservability(mode: ObservabilityMode): void {
  if (mode === 'off') {
    disableTracing();
    disableMetrics();
    current = app.gateway;
    return;
  }
  if (!observed) throw new Error('started without MEMGATE_BENCH_OBSERVABILITY=1');
  enableTracing(mode === 'full' ? observed.full : observed.on);
  enableMetrics(() => capture.db.load?.() ?? {});
  current = observed.gateway;
}

// Connected on the first profile request only: a run that never profiles has no session.
let profiler: Session | null = null;

function memory(): ChildMemory {
  const cpu = process.cpuUsage();
  return {
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssBytes: process.memoryUsage.rss(),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
}

const ROLLBACK = new Error('rolled back on purpose');

async function rolledBack(sql: string, params: unknown[] | undefined): Promise<number> {
  let ms = 0;
  await raw
    .transaction('benchRolledBack', async (tx) => {
      const started = performance.now();
      await tx.query(sql, params);
      ms = performance.now() - started;
      throw ROLLBACK;
    })
    .catch((error: unknown) => {
      if (error !== ROLLBACK) throw error;
    });
  return ms;
}

async function handle(request: ChildRequest): Promise<unknown> {
  switch (request.type) {
    case 'capture-start':
      capture.start();
      return null;
    case 'capture-stop': {
      const summary = capture.stop();
      if (request.keep) floor.keep(capture.statements());
      return summary;
    }
    case 'captured-statements':
      return capture.statements();
    case 'floor-clear':
      floor.clear();
      return null;
    case 'floor-replay-each':
      return floor.replayEach();
    case 'floor-throughput':
      return floor.throughput(request.concurrency, request.durationMs);
    case 'query':
      return (await raw.query(request.sql, request.params)).rows;
    case 'rolled-back':
      return rolledBack(request.sql, request.params);
    case 'memory':
      return memory();
    case 'observability':
      switchObservability(request.mode);
      return null;
    case 'model-extraction':
      switchModel(request.on);
      return null;
    case 'drain-extraction':
      return drainExtraction();
    case 'profile-start':
      if (!profiler) {
        profiler = new Session();
        profiler.connect();
      }
      await profiler.post('Profiler.enable');
      // Every 100 µs (the default is 1 ms): a round of cheap reads is otherwise a few hundred samples.
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.post('Profiler.start');
      return null;
    case 'profile-stop': {
      if (!profiler) throw new Error('profile-stop without profile-start');
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(request.file, JSON.stringify(profile));
      return null;
    }
    case 'stop':
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
      setImmediate(() => process.exit(0));
      return null;
  }
}

process.on('message', (message: { id: number; request: ChildRequest }) => {
  handle(message.request).then(
    (result) => send({ id: message.id, result }),
    (error: unknown) =>
      send({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
// The parent's death must not leave a gateway (and a PGlite lock) behind.
process.on('disconnect', () => process.exit(0));

send({ type: 'ready', port, memory: memory(), embedder: app.deps.embedder.model });
