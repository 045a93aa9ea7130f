/**
 * The benchmark run: build a throwaway database, load the seeded dataset with SQL, measure
 * HNSW recall on it, start the real gateway in a child process, then drive every scenario
 * whose GraphQL fields exist over loopback HTTP, and collect the figures.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DocumentNode, Kind, type SelectionSetNode, parse, validate } from 'graphql';
import { parseConfig } from '../src/config.js';
import { createEmbedder } from '../src/providers/create-embedder.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import { resolveSettings } from '../src/modules/retrieval/pipeline/settings.js';
import { backendCpu, backendCpuSpent } from './backend-cpu.js';
import { withDurability } from './durability.js';
import { type BenchBackend, createThrowaway, markLoaded, pgliteDir } from './database.js';
import { Dataset, SIZES, type SizeName, type SizeSpec } from './generate.js';
import { startGateway } from './gateway-process.js';
import { type ModelStandIn, startModelStandIn } from './model-stand-in.js';
import { type HnswRecall, measureHnswRecall } from './hnsw-recall.js';
import { closeSharedAgent, describeError, gql, runLoad } from './http-load.js';
import { type LoadReport, loadDataset } from './load.js';
import {
  type ObservabilityFigure,
  type OtlpSink,
  OBSERVED_INGEST,
  measureObservability,
  startOtlpSink,
} from './observability-overhead.js';
import { type ReadFloor, measureReadFloor } from './read-floor.js';
import { type Latency, latency, median } from './stats.js';
import {
  type Drained,
  type IngestScenario,
  type PostingsUpkeep,
  type ReadScenario,
  type Scenario,
  type ScenarioContext,
  SkipScenario,
} from './scenarios/types.js';
import { SCENARIOS } from './scenarios/index.js';
import { TextModel } from './text-model.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The model name the stand-in answers as. */
const STAND_IN_MODEL = 'bench-extraction';

export interface BenchOptions {
  size: SizeName;
  backend: BenchBackend;
  quick: boolean;
  seed: number;
  /** Repeated runs per (scenario, concurrency); medians are reported. */
  runs: number;
  concurrency: number[];
  /** Items per ingest mutation (500; 100 with --quick). */
  batchSize: number;
  /**
   * Timed batches per ingest figure (default 3, and 6 for scenarios measured in rounds against
   * a baseline; 1 with --quick).
   */
  batches?: number | undefined;
  /** Prefix of the results files' names (a partial run written beside the full-suite files). */
  label?: string | undefined;
  /** Scenario names to run (all when empty). */
  only: string[];
  cacheDir: string;
  databaseUrl: string | undefined;
  /** postgres: keep the loaded database under this name and reuse it next time. */
  keepDatabase?: string | undefined;
  argv: string[];
}

export interface ReadRun {
  concurrency: number;
  runs: number;
  requests: number;
  /** Medians over the runs of each run's figure. */
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  /**
   * Gateway-process CPU time per request (median over runs). With PGlite it includes the
   * database; unlike latency it does not grow when other processes compete for the cores.
   */
  cpuMsPerRequest: number;
  perRun: {
    requests: number;
    /** How long the run took (the floor's throughput replays for as long). */
    wallMs: number;
    rps: number;
    p50: number;
    p95: number;
    p99: number;
    cpuMsPerRequest: number;
  }[];
}

/**
 * The gateway's overhead over its SQL, per request of the set the floor captured (read-floor.ts):
 * medians over those requests.
 */
export interface Overhead {
  /** Requests captured (the distinct requests of the latency run). */
  samples: number;
  /** Median end-to-end time of a captured request, timed while it was captured (ms). */
  e2eMs: number;
  /** Median sum of a request's statements replayed one after another on the driver, warm (ms). */
  sqlMs: number;
  /** Median over requests of end to end ÷ replayed SQL. */
  ratio: number;
  /**
   * Median wall time during which the request had a statement in flight, measured in the
   * gateway (on PostgreSQL channels overlap, so this is below the replayed sum).
   */
  sqlWallMs: number;
  /** End to end ÷ that in-request SQL wall time: what the gateway adds on the critical path. */
  wallRatio: number;
  statements: number;
  /** Statements that failed on replay (warm-up and measured pass). */
  replayErrors: number;
  /** Statement names by their median time within a request on replay, slowest first. */
  slowest: { name: string; ms: number }[];
}

export interface ReadFigure {
  name: string;
  title: string;
  note?: string;
  statements: { median: number; max: number } | null;
  /** `extensions.sql.ms` at one client: the gateway's own sum of its statements' times. */
  gatewaySqlMs: number | null;
  concurrency: ReadRun[];
  overhead: Overhead | null;
  /** memgate ÷ its SQL floor (native PostgreSQL only; absent on PGlite). */
  floor?: ReadFloor;
}

export interface IngestFigure {
  name: string;
  title: string;
  unit: string;
  batches: number;
  batchSize: number;
  items: number;
  perSec: number;
  perSecMedianBatch: number;
  batchMs: Latency;
  rejected: number;
  firstRejection?: string;
  statementsPerBatch: number | null;
  /** Gateway-process CPU time per item (PGlite: database included). */
  cpuMsPerItem: number;
  /** PostgreSQL: CPU time per item of the server's backends serving the database (a local server). */
  databaseCpuMsPerItem?: number;
  /** Each timed batch's time, in the order run (ms). */
  perBatchMs?: number[];
  derived?: { unit: string; count: number; perSec: number };
  /** The same rows inserted by hand (multi-row INSERTs): their rate, and perSec ÷ that rate. */
  floor?: { perSec: number; ratio: number };
  /**
   * What the BM25 postings add per chunk: each timed batch's chunks inserted with and without
   * the postings CTEs in rolled-back transactions, (Σ with − Σ without) ÷ Σ chunks, in ms.
   */
  postingsMsPerChunk?: number;
  /** Those inserts' sums over the timed batches (each batch's figure a median over rounds). */
  postingsUpkeep?: PostingsUpkeep;
  /** Scenarios with a run of their own (bulk import): named phases, in milliseconds. */
  phases?: Record<string, number>;
  /** The gateway process's peak resident memory when the scenario ended (PGlite: database included). */
  peakRssMB?: number;
  /** What the scenario's set-up prepared (a pack, a model stand-in). */
  note?: string;
  /**
   * Against the scenario it is compared with, measured in alternating rounds: perSec ÷ its
   * perSec, the median over rounds of the two batches' rate ratio, CPU per item ÷ its (the
   * gateway's, plus the database backends' on PostgreSQL), and the statements per batch added.
   */
  baseline?: {
    name: string;
    perSec: number;
    ratio: number;
    pairedRatio: number;
    cpuRatio: number;
    extraStatements: number | null;
  };
  /** Work the batches left to a background worker, drained after each batch (not in perSec). */
  drained?: { unit: string; count: number; ms: number; perSec: number; batchMs: Latency };
}

export interface BenchResult {
  meta: {
    date: string;
    durationMs: number;
    command: string;
    commit: string;
    dirty: boolean;
    machine: {
      cpu: string;
      cores: number;
      memoryGB: number;
      os: string;
      node: string;
      loadAvgStart: number[];
      loadAvgEnd: number[];
    };
    backend: BenchBackend;
    versions: Record<string, string>;
    size: SizeSpec & { documents: number; observations: number; episodes: number; hubDegree: number };
    seed: number;
    quick: boolean;
    runs: number;
    concurrency: number[];
    batchSize: number;
    /** Settings the gateway ran with that differ from the defaults. */
    gatewayEnv: Record<string, string>;
    /** Settings of the second, model-configured gateway in the same process (model scenarios). */
    modelGatewayEnv?: Record<string, string>;
    /** The results files' name prefix (partial runs). */
    label?: string;
  };
  load: LoadReport;
  embedding: { model: string; dimensions: number; textsPerSec: number; runs: number };
  hnsw: HnswRecall[];
  ingest: IngestFigure[];
  reads: ReadFigure[];
  /** Per-request cost of MEMGATE_METRICS=1 plus OTLP tracing, against both off (absent in older results). */
  observability?: ObservabilityFigure[];
  resources: {
    gatewayStartMs: number;
    /** CPU time of the gateway process while it served the scenarios. */
    gatewayCpuMs: number;
    rssStartMB: number;
    rssEndMB: number;
    peakRssMB: number;
    dbBytesAfterLoad: number;
    dbBytesEnd: number;
    dataDirBytesEnd: number | null;
  };
  skipped: { name: string; reason: string }[];
}

type Log = (msg: string) => void;

export async function runBench(options: BenchOptions, log: Log): Promise<BenchResult> {
  const started = performance.now();
  const loadAvgStart = loadavg();
  const spec = options.quick ? SIZES.quick : SIZES[options.size];
  const skipped: { name: string; reason: string }[] = [];

  // Which scenarios can run: their documents must validate against today's schema.
  const { schema } = await import('../src/schema/index.js');
  const runnable: Scenario[] = [];
  for (const scenario of SCENARIOS) {
    const optIn = scenario.kind === 'ingest' && scenario.optIn;
    if (options.only.length ? !options.only.includes(scenario.name) : optIn) continue;
    const docs = [scenario.document, ...(scenario.setupDocuments ?? [])];
    const problems = docs.flatMap((d) => validate(schema, parse(d)).map((e) => e.message));
    if (problems.length) {
      skipped.push({
        name: scenario.name,
        reason: `not in the schema yet: ${problems.slice(0, 2).join('; ')}`,
      });
      log(`skip ${scenario.name}: ${problems[0]}`);
    } else runnable.push(scenario);
  }

  log(`embedder: offline (cache in ${options.cacheDir})`);
  const embedder = await createEmbedder('offline', { dataDir: options.cacheDir, log });
  const embedding = await measureEmbedding(embedder, options.quick ? 1 : 3);
  const words = await loadWordVectors({ dataDir: options.cacheDir });
  const ds = new Dataset(spec, options.seed, new TextModel(words.words, options.seed));
  log(
    `dataset ${spec.name}: ${ds.entities} entities (${ds.documents} documents, ${ds.episodes} episodes), ` +
      `${spec.facts} facts, ${spec.chunks} chunks (${ds.observations} observations)`,
  );

  const datasetKey = `${spec.name}:${options.seed}:${embedder.model}`;
  const throwaway = await createThrowaway(
    options.backend,
    {
      databaseUrl: options.databaseUrl,
      cacheDir: options.cacheDir,
      embedding: { model: embedder.model, dimensions: embedder.dimensions },
      keepDatabase: options.keepDatabase,
    },
    datasetKey,
  );
  log(
    `database: ${throwaway.location.backend === 'pglite' ? throwaway.location.dir : throwaway.location.name}`,
  );
  let gateway: Awaited<ReturnType<typeof startGateway>> | null = null;
  let sink: OtlpSink | null = null;
  let model: ModelStandIn | null = null;
  // Interrupted (Ctrl-C, a CI timeout): still stop the gateway and delete the database.
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the gateway and deleting the throwaway database`);
    void (async () => {
      if (gateway) await gateway.stop().catch(() => undefined);
      await throwaway.destroy().catch(() => undefined);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    })();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const opened = await throwaway.openMigrated();
    const db = opened.db;
    log(
      `created and migrated in ${(opened.ms / 1000).toFixed(1)} s${opened.fromTemplate ? ' (from the cached template)' : ''}; loading`,
    );
    let load: LoadReport;
    let hnsw: HnswRecall[];
    let dbBytesAfterLoad: number;
    let hubDegree: number;
    const versions: Record<string, string> = {};
    try {
      if (throwaway.reused) {
        log(
          `reusing the kept database ${throwaway.location.backend === 'postgres' ? throwaway.location.name : ''} (no load, no HNSW recall)`,
        );
        load = { phases: [], totalMs: 0, rows: {} };
        hnsw = [];
      } else {
        load = await loadDataset(db, ds, embedder, log);
        load.phases.unshift({
          name: `create + migrate${opened.fromTemplate ? ' (template)' : ''}`,
          ms: opened.ms,
        });
        load.totalMs += opened.ms;
        log(`loaded in ${(load.totalMs / 1000).toFixed(1)} s; measuring HNSW recall`);
        hnsw = await measureHnswRecall(db, ds, embedder, {
          queries: options.quick ? 20 : options.size === 'L' ? 50 : 100,
          k: [10, 20],
          // pgvector's default, and what search and context configure (src/modules/retrieval/pipeline/settings.ts).
          efSearch: [...new Set([40, configuredEfSearch(embedder.model)])],
        });
        if (options.keepDatabase) await markLoaded(db, datasetKey);
      }
      dbBytesAfterLoad = await databaseBytes(db);
      const hub = await db.query<{ n: number }>(
        `/* benchHubDegree */ SELECT count(*)::int AS n FROM facts WHERE namespace = $1 AND (subject = $2 OR object = $2)`,
        [ds.namespace, ds.hubKey(0)],
      );
      hubDegree = hub.rows[0]?.n ?? 0;
      const v = await db.query<{ server: string; vector: string }>(
        `/* benchVersions */ SELECT current_setting('server_version') AS server,
           (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector`,
      );
      versions.postgres = v.rows[0]?.server ?? '';
      versions.pgvector = v.rows[0]?.vector ?? '';
    } finally {
      await db.close();
    }
    versions.pglite = packageVersion('@electric-sql/pglite');
    versions.graphqlYoga = packageVersion('graphql-yoga');
    versions.embedder = embedder.model;

    // The gateway runs with the product's defaults, except a query depth limit raised to what
    // the deepest scenario needs (a client would raise MEMGATE_MAX_DEPTH the same way) and
    // metrics off; both reported.
    const defaultDepth = parseConfig(process.env).maxDepth;
    const neededDepth = Math.max(
      0,
      ...runnable.filter((s) => s.kind === 'read').map((s) => documentDepth(parse(s.document))),
    );
    // Metrics off: their cost is measured on its own (measureObservability), against this.
    const gatewayEnv: Record<string, string> = {
      MEMGATE_METRICS: '0',
      ...(neededDepth > defaultDepth ? { MEMGATE_MAX_DEPTH: String(neededDepth) } : {}),
    };
    if (gatewayEnv.MEMGATE_MAX_DEPTH)
      log(`gateway: MEMGATE_MAX_DEPTH=${neededDepth} (default ${defaultDepth})`);
    log('starting the gateway process');
    sink = await startOtlpSink();
    // Scenarios of model extraction: a local stand-in answers the model of a second gateway in
    // the child, configured as MEMGATE_LLM and OPENAI_BASE_URL would configure it.
    let modelGatewayEnv: Record<string, string> | undefined;
    if (runnable.some((s) => s.kind === 'ingest' && s.model)) {
      model = await startModelStandIn();
      modelGatewayEnv = { MEMGATE_LLM: `openai:${STAND_IN_MODEL}`, OPENAI_BASE_URL: model.url };
      log(`model stand-in on ${model.url}`);
    }
    // Metrics and tracing stay off except in the on/off comparison (measureObservability).
    gateway = await startGateway(throwaway.location, options.cacheDir, gatewayEnv, {
      MEMGATE_BENCH_OBSERVABILITY: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      ...(model ? { MEMGATE_BENCH_MODEL_URL: model.url, MEMGATE_BENCH_MODEL: STAND_IN_MODEL } : {}),
    });
    const gw = gateway;
    log(`gateway on ${gw.url} (pid ${gw.pid}, up in ${(gw.startMs / 1000).toFixed(1)} s)`);
    const ctx: ScenarioContext = {
      ds,
      backend: options.backend,
      quick: options.quick,
      gateway: gw,
      gql: (q, v) => gql(gw.url, q, v),
      log,
    };

    const reads: ReadFigure[] = [];
    for (const scenario of runnable.filter((s): s is ReadScenario => s.kind === 'read')) {
      const figure = await runRead(scenario, ctx, options, log).catch((error: unknown) => {
        const reason = error instanceof SkipScenario ? error.message : `failed: ${String(error)}`;
        skipped.push({ name: scenario.name, reason });
        log(`skip ${scenario.name}: ${reason}`);
        return null;
      });
      if (figure) reads.push(figure);
    }
    const ingestScenarios = runnable.filter((s): s is IngestScenario => s.kind === 'ingest');
    // Before the ingest figures: after them the gateway is still busy with what their writes
    // left it (entity summaries to refresh), CPU that would land on either side of a round.
    log('metrics and tracing: off, on as shipped, every trace sampled, in rotating rounds');
    const observed = reads.map((f) => runnable.find((s) => s.name === f.name) as ReadScenario);
    const observedIngest = ingestScenarios.find((s) => s.name === OBSERVED_INGEST);
    const observability = await measureObservability(observed, observedIngest, ctx, options.quick, log);
    log(`  OTLP sink received ${sink.requests} exports, ${Math.round(sink.bytes / 1024)} KiB`);
    const ingest: IngestFigure[] = [];
    const skip = (name: string, error: unknown) => {
      const reason = error instanceof SkipScenario ? error.message : `failed: ${String(error)}`;
      skipped.push({ name, reason });
      log(`skip ${name}: ${reason}`);
    };
    for (const scenario of ingestScenarios) {
      // A scenario compared with another runs in that one's rounds.
      if (scenario.baseline && ingestScenarios.some((s) => s.name === scenario.baseline)) continue;
      const compared = ingestScenarios.filter((s) => s.baseline === scenario.name);
      if (compared.length > 0) {
        ingest.push(...(await runCompared([scenario, ...compared], ctx, options, log, skip)));
        continue;
      }
      const figure = await runIngest(scenario, ctx, options, log).catch((error: unknown) => {
        skip(scenario.name, error);
        return null;
      });
      if (figure) ingest.push(figure);
    }
    const memory = await gw.memory();
    const [{ bytes: dbBytesEnd } = { bytes: 0 }] = await gw.query<{ bytes: number }>(
      `/* benchDatabaseSize */ SELECT pg_database_size(current_database())::float8 AS bytes`,
    );
    const dataDirBytesEnd =
      throwaway.location.backend === 'pglite' ? directoryBytes(pgliteDir(throwaway.location.dir)) : null;
    await gw.stop();
    gateway = null;
    closeSharedAgent();

    const { commit, dirty } = gitState();
    const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
    return {
      meta: {
        date: new Date().toISOString(),
        durationMs: performance.now() - started,
        command: commandLine(options),
        commit,
        dirty,
        machine: {
          cpu: cpus()[0]?.model ?? 'unknown',
          cores: cpus().length,
          memoryGB: Math.round((totalmem() / 1073741824) * 10) / 10,
          os: `${osType()} ${release()}`,
          node: process.version,
          loadAvgStart: loadAvgStart.map((x) => Math.round(x * 100) / 100),
          loadAvgEnd: loadavg().map((x) => Math.round(x * 100) / 100),
        },
        backend: options.backend,
        versions,
        size: {
          ...spec,
          documents: ds.documents,
          observations: ds.observations,
          episodes: ds.episodes,
          hubDegree,
        },
        seed: options.seed,
        quick: options.quick,
        runs: options.runs,
        concurrency: options.concurrency,
        batchSize: options.batchSize,
        gatewayEnv,
        ...(modelGatewayEnv ? { modelGatewayEnv } : {}),
        ...(options.label ? { label: options.label } : {}),
      },
      load,
      embedding,
      hnsw,
      ingest,
      reads,
      observability,
      resources: {
        gatewayStartMs: gw.startMs,
        gatewayCpuMs: memory.cpuMs - gw.startMemory.cpuMs,
        rssStartMB: mb(gw.startMemory.rssBytes),
        rssEndMB: mb(memory.rssBytes),
        peakRssMB: mb(memory.maxRssBytes),
        dbBytesAfterLoad,
        dbBytesEnd,
        dataDirBytesEnd,
      },
      skipped,
    };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (gateway) await gateway.stop().catch(() => undefined);
    await sink?.close();
    await model?.close();
    await throwaway
      .destroy()
      .catch((error: unknown) => log(`could not delete the throwaway database: ${String(error)}`));
  }
}

async function runRead(
  scenario: ReadScenario,
  ctx: ScenarioContext,
  options: BenchOptions,
  log: Log,
): Promise<ReadFigure> {
  const note = scenario.setup ? await scenario.setup(ctx) : undefined;
  const body = (i: number) =>
    JSON.stringify({ query: scenario.document, variables: scenario.variables(ctx.ds, i) });
  const url = ctx.gateway.url;

  // One probe: a field that exists but fails is reported, not timed.
  const probe = await ctx.gql(scenario.document, scenario.variables(ctx.ds, 0));
  if (probe.status !== 200 || probe.errors?.length)
    throw new SkipScenario(`errors on a probe request: ${describeError(probe)}`);

  const warmup = options.quick ? 3 : 20;
  await runLoad({ url, concurrency: 1, requests: warmup, maxMs: 30_000, body: (i) => body(1000 + i) });

  const statements: number[] = [];
  const gatewaySql: number[] = [];
  const concurrency: ReadRun[] = [];
  // The requests the runs sent: the floor captures the same ones.
  const sent: number[] = [];
  for (const c of scenario.concurrency ?? options.concurrency) {
    const perRun: ReadRun['perRun'] = [];
    let errors = 0;
    for (let r = 0; r < options.runs; r++) {
      const requests = options.quick ? Math.max(10, c * 2) : Math.max(60, c * 8);
      const cpuBefore = (await ctx.gateway.memory()).cpuMs;
      const result = await runLoad({
        url,
        concurrency: c,
        requests,
        maxMs: options.quick ? 1_500 : 10_000,
        body: (i) => {
          sent.push(r * 7919 + i);
          return body(r * 7919 + i);
        },
      });
      const cpuMs = (await ctx.gateway.memory()).cpuMs - cpuBefore;
      errors += result.errors;
      statements.push(...result.statements);
      if (c === 1) gatewaySql.push(...result.sqlMs);
      const l = latency(result.latencies);
      perRun.push({
        requests: result.latencies.length,
        wallMs: result.wallMs,
        rps: (result.latencies.length / result.wallMs) * 1000,
        p50: l.p50,
        p95: l.p95,
        p99: l.p99,
        cpuMsPerRequest: cpuMs / Math.max(1, result.latencies.length),
      });
      if (result.errors)
        log(`  ${scenario.name} c${c}: ${result.errors} errors, e.g. ${result.errorSamples[0]}`);
    }
    const run: ReadRun = {
      concurrency: c,
      runs: perRun.length,
      requests: perRun.reduce((a, b) => a + b.requests, 0),
      rps: median(perRun.map((p) => p.rps)),
      p50: median(perRun.map((p) => p.p50)),
      p95: median(perRun.map((p) => p.p95)),
      p99: median(perRun.map((p) => p.p99)),
      errors,
      cpuMsPerRequest: median(perRun.map((p) => p.cpuMsPerRequest)),
      perRun,
    };
    concurrency.push(run);
    log(
      `  ${scenario.name} c${c}: p50 ${run.p50.toFixed(2)} ms, p95 ${run.p95.toFixed(2)} ms, ${run.rps.toFixed(0)} req/s, gateway CPU ${run.cpuMsPerRequest.toFixed(2)} ms/req`,
    );
  }

  const { floor, overhead } = await measureReadFloor(scenario, ctx, sent, concurrency);
  logFloor(scenario.name, overhead, floor, log);
  return {
    name: scenario.name,
    title: scenario.title,
    ...(note ? { note } : {}),
    statements: statements.length ? { median: median(statements), max: Math.max(...statements) } : null,
    gatewaySqlMs: gatewaySql.length ? median(gatewaySql) : null,
    concurrency,
    overhead,
    ...(floor ? { floor } : {}),
  };
}

function logFloor(name: string, overhead: Overhead, floor: ReadFloor | null, log: Log): void {
  const x = (v: number | null) => (v === null ? '–' : `${v.toFixed(2)}×`);
  log(
    `  ${name} overhead (${overhead.samples} requests): ${overhead.e2eMs.toFixed(2)} ms end to end / ${overhead.sqlMs.toFixed(2)} ms SQL replayed = ${overhead.ratio.toFixed(2)}×` +
      (overhead.replayErrors ? `; ${overhead.replayErrors} replayed statements FAILED` : ''),
  );
  if (floor)
    log(
      `  ${name} ÷ SQL floor: p50 ${floor.memgateP50?.toFixed(2) ?? '–'} / ${floor.p50.toFixed(2)} ms = ${x(floor.p50Ratio)}; ` +
        `c${floor.concurrency ?? '–'} ${floor.memgateRps?.toFixed(0) ?? '–'} / ${floor.rps?.toFixed(0) ?? '–'} req/s = ${x(floor.throughputRatio)}` +
        (floor.firstReplayError ? `; first replay error: ${floor.firstReplayError}` : ''),
    );
}

/** Timed batches per ingest figure, and per scenario measured in rounds against a baseline. */
const INGEST_BATCHES = 3;
const COMPARED_ROUNDS = 6;
/** Items of the untimed batch each compared scenario sends first (one-off costs: caches, plans). */
const WARM_UP_ITEMS = 50;
/** Batch number of that warm-up batch: its items' ids are the timed batches' neither. */
const WARM_UP_BATCH = 999;

/** One timed batch: its time, what the answer said, and what followed it untimed. */
interface BatchSample {
  ms: number;
  items: number;
  statements: number | null;
  rejected: number;
  firstRejection?: string;
  /** Gateway-process CPU time during the request. */
  cpuMs: number;
  /** PostgreSQL: the database backends' CPU time during the request. */
  databaseCpuMs?: number;
  floorMs?: number;
  postings?: PostingsUpkeep;
  drained?: Drained;
}

async function runIngest(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  options: BenchOptions,
  log: Log,
): Promise<IngestFigure> {
  if (scenario.run) return runWhole(scenario, ctx, options, log);
  const note = scenario.setup ? await scenario.setup(ctx) : undefined;
  const batches = options.batches ?? (options.quick ? 1 : INGEST_BATCHES);
  const samples: BatchSample[] = [];
  for (let b = 0; b < batches; b++) samples.push(await timedBatch(scenario, ctx, b, options.batchSize));
  const figure = await figureOf(scenario, ctx, samples, options.batchSize, note);
  logIngest(figure, log);
  return figure;
}

/**
 * A baseline and the scenarios compared with it: each set up and warmed with one small untimed
 * batch, then timed in rounds of one batch each, the order rotating from round to round, so
 * that a change in the machine's load falls on all of them alike. A scenario that fails is
 * dropped (and reported skipped); the others go on.
 */
async function runCompared(
  group: IngestScenario[],
  ctx: ScenarioContext,
  options: BenchOptions,
  log: Log,
  skip: (name: string, error: unknown) => void,
): Promise<IngestFigure[]> {
  const active: { scenario: IngestScenario; note?: string; samples: BatchSample[]; derivedBefore: number }[] =
    [];
  for (const scenario of group) {
    try {
      const note = scenario.setup ? await scenario.setup(ctx) : undefined;
      await timedBatch(scenario, ctx, WARM_UP_BATCH, Math.min(WARM_UP_ITEMS, options.batchSize));
      // What the warm-up derived is not the timed batches' to count.
      const derivedBefore = scenario.derived ? ((await scenario.derived(ctx))?.count ?? 0) : 0;
      active.push({ scenario, ...(note ? { note } : {}), samples: [], derivedBefore });
    } catch (error) {
      skip(scenario.name, error);
    }
  }
  const rounds = options.batches ?? (options.quick ? 1 : COMPARED_ROUNDS);
  log(`  ${active.map((a) => a.scenario.name).join(', ')}: ${rounds} alternating rounds`);
  for (let round = 0; round < rounds; round++) {
    const order = active.map((_, k) => active[(round + k) % active.length]!);
    for (const entry of order) {
      try {
        entry.samples.push(await timedBatch(entry.scenario, ctx, round, options.batchSize));
      } catch (error) {
        skip(entry.scenario.name, error);
        active.splice(active.indexOf(entry), 1);
      }
    }
  }
  const figures: IngestFigure[] = [];
  for (const entry of active) {
    figures.push(
      await figureOf(entry.scenario, ctx, entry.samples, options.batchSize, entry.note, entry.derivedBefore),
    );
  }
  for (const [k, figure] of figures.entries()) {
    const base = figures.find((f) => f.name === active[k]!.scenario.baseline);
    const baseSamples = active.find((a) => a.scenario.name === base?.name)?.samples;
    if (base && baseSamples) {
      const own = active[k]!.samples;
      figure.baseline = {
        name: base.name,
        perSec: base.perSec,
        ratio: figure.perSec / base.perSec,
        pairedRatio: median(own.map((s, r) => baseSamples[r]!.ms / s.ms)),
        cpuRatio: totalCpu(figure) / totalCpu(base),
        extraStatements:
          figure.statementsPerBatch !== null && base.statementsPerBatch !== null
            ? figure.statementsPerBatch - base.statementsPerBatch
            : null,
      };
    }
    logIngest(figure, log);
  }
  return figures;
}

/** CPU per item: the gateway's, plus the database backends' where they are measured. */
function totalCpu(f: IngestFigure): number {
  return f.cpuMsPerItem + (f.databaseCpuMsPerItem ?? 0);
}

/** Batch `b` of the scenario, timed; a failing first batch skips the scenario. */
async function timedBatch(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  b: number,
  size: number,
): Promise<BatchSample> {
  if (!scenario.durable) return timedBatchAsSet(scenario, ctx, b, size);
  if (ctx.backend !== 'postgres') throw new SkipScenario('durability is switched on native PostgreSQL only');
  return withDurability(ctx.gateway, () => timedBatchAsSet(scenario, ctx, b, size));
}

/** Batch `b` timed on the database as it is set (see `timedBatch`). */
async function timedBatchAsSet(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  b: number,
  size: number,
): Promise<BatchSample> {
  const batch = scenario.batch(ctx.ds, b, size);
  await scenario.beforeBatch?.(ctx);
  let answer: Awaited<ReturnType<ScenarioContext['gql']>>;
  let ms: number;
  let cpuMs: number;
  let databaseCpuMs: number | undefined;
  try {
    const backendsBefore = ctx.backend === 'postgres' ? await backendCpu(ctx.gateway) : null;
    const cpuBefore = (await ctx.gateway.memory()).cpuMs;
    const t = performance.now();
    answer = await ctx.gql(scenario.document, batch.variables);
    ms = performance.now() - t;
    cpuMs = (await ctx.gateway.memory()).cpuMs - cpuBefore;
    const backendsAfter = backendsBefore ? await backendCpu(ctx.gateway) : null;
    if (backendsBefore && backendsAfter) databaseCpuMs = backendCpuSpent(backendsBefore, backendsAfter);
    if (answer.status !== 200 || answer.errors?.length) {
      if (b === 0 || b === WARM_UP_BATCH)
        throw new SkipScenario(`errors on the first batch: ${describeError(answer)}`);
      throw new Error(`batch ${b}: ${describeError(answer)}`);
    }
  } catch (error) {
    // Whatever `beforeBatch` switched is switched back.
    await scenario.afterBatch?.(ctx, b).catch(() => undefined);
    throw error;
  }
  const drained = await scenario.afterBatch?.(ctx, b);
  const payload = Object.values(answer.data ?? {})[0] as
    | { rejected?: number; results?: { status: string; code?: string; message?: string }[] }
    | undefined;
  const bad = payload?.results?.find((r) => r.status === 'REJECTED');
  return {
    ms,
    items: batch.items,
    statements: answer.extensions?.sql?.statements ?? null,
    rejected: payload?.rejected ?? 0,
    ...(bad ? { firstRejection: `${bad.code ?? ''} ${bad.message ?? ''}`.trim() } : {}),
    cpuMs,
    ...(databaseCpuMs !== undefined ? { databaseCpuMs } : {}),
    ...(scenario.floor && b !== WARM_UP_BATCH ? { floorMs: await scenario.floor(ctx, b) } : {}),
    ...(await postingsOf(scenario, ctx, b)),
    ...(drained ? { drained } : {}),
  };
}

/** Batch `b`'s postings upkeep, when the scenario measures it (never for the warm-up batch). */
async function postingsOf(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  b: number,
): Promise<{ postings?: PostingsUpkeep }> {
  if (!scenario.postings || b === WARM_UP_BATCH) return {};
  const upkeep = await scenario.postings(ctx, b);
  return upkeep ? { postings: upkeep } : {};
}

async function figureOf(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  samples: BatchSample[],
  size: number,
  note: string | undefined,
  /** Of the derived count, what was there before the timed batches. */
  derivedBefore = 0,
): Promise<IngestFigure> {
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const times = samples.map((s) => s.ms);
  const total = sum(times);
  const items = sum(samples.map((s) => s.items));
  const statements = samples.flatMap((s) => (s.statements === null ? [] : [s.statements]));
  const rejected = sum(samples.map((s) => s.rejected));
  const firstRejection = samples.find((s) => s.firstRejection)?.firstRejection;
  const derivedTotal = scenario.derived ? await scenario.derived(ctx) : null;
  const derivedCount = derivedTotal ? { ...derivedTotal, count: derivedTotal.count - derivedBefore } : null;
  const figure: IngestFigure = {
    name: scenario.name,
    title: scenario.title,
    unit: scenario.unit,
    batches: samples.length,
    batchSize: size,
    items,
    perSec: (items / total) * 1000,
    perSecMedianBatch: median(samples.map((s) => (s.items / s.ms) * 1000)),
    batchMs: latency(times),
    rejected,
    ...(firstRejection ? { firstRejection } : {}),
    statementsPerBatch: statements.length ? median(statements) : null,
    cpuMsPerItem: sum(samples.map((s) => s.cpuMs)) / Math.max(1, items),
    ...(samples.every((s) => s.databaseCpuMs !== undefined)
      ? { databaseCpuMsPerItem: sum(samples.map((s) => s.databaseCpuMs!)) / Math.max(1, items) }
      : {}),
    perBatchMs: times,
    ...(derivedCount ? { derived: { ...derivedCount, perSec: (derivedCount.count / total) * 1000 } } : {}),
    ...(note ? { note } : {}),
  };
  const floorMs = samples.flatMap((s) => (s.floorMs === undefined ? [] : [s.floorMs]));
  const floorTotal = sum(floorMs);
  if (floorMs.length > 0 && Number.isFinite(floorTotal) && floorTotal > 0) {
    const perSec = (items / floorTotal) * 1000;
    figure.floor = { perSec, ratio: figure.perSec / perSec };
  }
  const postings = samples.flatMap((s) => (s.postings ? [s.postings] : []));
  if (postings.length > 0) {
    const upkeep = {
      chunks: sum(postings.map((p) => p.chunks)),
      withMs: sum(postings.map((p) => p.withMs)),
      withoutMs: sum(postings.map((p) => p.withoutMs)),
    };
    figure.postingsUpkeep = upkeep;
    figure.postingsMsPerChunk = (upkeep.withMs - upkeep.withoutMs) / upkeep.chunks;
  }
  const drained = samples.flatMap((s) => (s.drained ? [s.drained] : []));
  if (drained.length > 0) {
    const count = sum(drained.map((d) => d.count));
    const ms = sum(drained.map((d) => d.ms));
    figure.drained = {
      unit: drained[0]!.unit,
      count,
      ms,
      perSec: (count / ms) * 1000,
      batchMs: latency(drained.map((d) => d.ms)),
    };
  }
  return figure;
}

function logIngest(figure: IngestFigure, log: Log): void {
  log(
    `  ${figure.name}: ${figure.perSec.toFixed(0)} ${figure.unit}/s` +
      (figure.derived ? ` (${figure.derived.perSec.toFixed(0)} ${figure.derived.unit}/s)` : '') +
      (figure.floor
        ? `, ${figure.floor.ratio.toFixed(2)}× the hand-written floor (${figure.floor.perSec.toFixed(0)}/s)`
        : '') +
      (figure.postingsMsPerChunk !== undefined
        ? `, postings ${figure.postingsMsPerChunk.toFixed(3)} ms/chunk`
        : '') +
      (figure.baseline
        ? `, ${figure.baseline.ratio.toFixed(3)}× ${figure.baseline.name} (paired ${figure.baseline.pairedRatio.toFixed(3)}×, CPU ${figure.baseline.cpuRatio.toFixed(3)}×, ${figure.baseline.extraStatements ?? '?'} statements more)`
        : '') +
      (figure.drained
        ? `; ${figure.drained.count} ${figure.drained.unit} drained after the batches at ${figure.drained.perSec.toFixed(0)}/s`
        : '') +
      (figure.rejected ? `, ${figure.rejected} rejected (${figure.firstRejection})` : ''),
  );
}

/** A scenario that runs itself (begin, many batches, finish): one figure for the whole run. */
async function runWhole(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  options: BenchOptions,
  log: Log,
): Promise<IngestFigure> {
  const cpuBefore = (await ctx.gateway.memory()).cpuMs;
  const run = await scenario.run!(ctx, options.batchSize);
  const memory = await ctx.gateway.memory();
  const derivedCount = scenario.derived ? await scenario.derived(ctx) : null;
  const figure: IngestFigure = {
    name: scenario.name,
    title: scenario.title,
    unit: scenario.unit,
    batches: run.batchMs.length,
    batchSize: Math.ceil(run.items / Math.max(1, run.batchMs.length)),
    items: run.items,
    perSec: (run.items / run.ms) * 1000,
    perSecMedianBatch: median(run.batchMs.map((ms) => (run.items / run.batchMs.length / ms) * 1000)),
    batchMs: latency(run.batchMs),
    rejected: run.rejected,
    ...(run.firstRejection ? { firstRejection: run.firstRejection } : {}),
    statementsPerBatch: run.statements.length ? median(run.statements) : null,
    cpuMsPerItem: (memory.cpuMs - cpuBefore) / Math.max(1, run.items),
    ...(derivedCount ? { derived: { ...derivedCount, perSec: (derivedCount.count / run.ms) * 1000 } } : {}),
    phases: run.phases,
    peakRssMB: Math.round((memory.maxRssBytes / 1048576) * 10) / 10,
  };
  log(
    `  ${scenario.name}: ${figure.perSec.toFixed(0)} ${scenario.unit}/s end to end ` +
      `(${run.items} in ${(run.ms / 1000).toFixed(1)} s; ${Object.entries(run.phases)
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
        .join(', ')}; peak RSS ${figure.peakRssMB} MB)` +
      (run.rejected ? `, ${run.rejected} rejected (${run.firstRejection})` : ''),
  );
  return figure;
}

async function measureEmbedding(
  embedder: { model: string; dimensions: number; embed(t: string[]): Promise<number[][]> },
  runs: number,
) {
  const texts = Array.from(
    { length: 2000 },
    (_, i) => `Benchmark sentence number ${i} about services, deployments and the people who own them.`,
  );
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    await embedder.embed(texts);
    rates.push((texts.length / (performance.now() - t)) * 1000);
  }
  return { model: embedder.model, dimensions: embedder.dimensions, textsPerSec: median(rates), runs };
}

async function databaseBytes(db: { query<R>(sql: string): Promise<{ rows: R[] }> }): Promise<number> {
  const { rows } = await db.query<{ bytes: number }>(
    `/* benchDatabaseSize */ SELECT pg_database_size(current_database())::float8 AS bytes`,
  );
  return Number(rows[0]?.bytes ?? 0);
}

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** Deepest field nesting of the document's operations (leaves count), as the depth limit counts. */
export function documentDepth(doc: DocumentNode): number {
  const depth = (set: SelectionSetNode | undefined): number => {
    if (!set) return 0;
    let deepest = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value.startsWith('__')) continue;
        deepest = Math.max(deepest, 1 + depth(sel.selectionSet));
      } else if (sel.kind === Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depth(sel.selectionSet));
    }
    return deepest;
  };
  return Math.max(
    0,
    ...doc.definitions.map((d) => (d.kind === Kind.OPERATION_DEFINITION ? depth(d.selectionSet) : 0)),
  );
}

function configuredEfSearch(embedderModel: string): number {
  return resolveSettings({ embedderModel }).vector.efSearch;
}

function packageVersion(name: string): string {
  try {
    return (
      JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return 'unknown';
  }
}

function gitState(): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
    });
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

function commandLine(options: BenchOptions): string {
  const args = options.argv.length ? ` -- ${options.argv.join(' ')}` : '';
  const wrapper = options.backend === 'postgres' ? 'scripts/with-native-postgres.sh ' : '';
  return `${wrapper}npm run bench${args}`;
}
