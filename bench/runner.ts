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
import { type BenchBackend, createThrowaway, markLoaded, pgliteDir } from './database.js';
import { Dataset, SIZES, type SizeName, type SizeSpec } from './generate.js';
import { startGateway } from './gateway-process.js';
import { type HnswRecall, measureHnswRecall } from './hnsw-recall.js';
import { closeSharedAgent, describeError, gql, runLoad } from './http-load.js';
import { type LoadReport, loadDataset } from './load.js';
import {
  type ObservabilityFigure,
  type OtlpSink,
  measureObservability,
  startOtlpSink,
} from './observability-overhead.js';
import { type Latency, latency, median } from './stats.js';
import {
  type IngestScenario,
  type ReadScenario,
  type Scenario,
  type ScenarioContext,
  SkipScenario,
} from './scenarios/types.js';
import { SCENARIOS } from './scenarios/index.js';
import { TextModel } from './text-model.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

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
  perRun: { requests: number; rps: number; p50: number; p95: number; p99: number; cpuMsPerRequest: number }[];
}

export interface Overhead {
  samples: number;
  /** Median over samples of the median end-to-end time of the same request (ms). */
  e2eMs: number;
  /** Median over samples of the median time of its statements replayed on the driver (ms). */
  sqlMs: number;
  ratio: number;
  /**
   * Median over samples of the wall time during which the request had a statement in flight,
   * measured in the gateway (on PostgreSQL channels overlap, so this is below the replayed sum).
   */
  sqlWallMs: number;
  /** End to end ÷ that in-request SQL wall time: what the gateway adds on the critical path. */
  wallRatio: number;
  statements: number;
  replayErrors: number;
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
  derived?: { unit: string; count: number; perSec: number };
  /** The same rows inserted by hand (multi-row INSERTs): their rate, and perSec ÷ that rate. */
  floor?: { perSec: number; ratio: number };
  /** Scenarios with a run of their own (bulk import): named phases, in milliseconds. */
  phases?: Record<string, number>;
  /** The gateway process's peak resident memory when the scenario ended (PGlite: database included). */
  peakRssMB?: number;
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
    if (options.only.length && !options.only.includes(scenario.name)) continue;
    const docs = [scenario.document, ...(scenario.kind === 'read' ? (scenario.setupDocuments ?? []) : [])];
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
    // the deepest scenario needs (reported): a client would raise MEMGATE_MAX_DEPTH the same way.
    const defaultDepth = parseConfig(process.env).maxDepth;
    const neededDepth = Math.max(
      0,
      ...runnable.filter((s) => s.kind === 'read').map((s) => documentDepth(parse(s.document))),
    );
    const gatewayEnv: Record<string, string> =
      neededDepth > defaultDepth ? { MEMGATE_MAX_DEPTH: String(neededDepth) } : {};
    if (gatewayEnv.MEMGATE_MAX_DEPTH)
      log(`gateway: MEMGATE_MAX_DEPTH=${neededDepth} (default ${defaultDepth})`);
    log('starting the gateway process');
    sink = await startOtlpSink();
    // Metrics and tracing stay off except in the on/off comparison (measureObservability).
    gateway = await startGateway(throwaway.location, options.cacheDir, gatewayEnv, {
      MEMGATE_BENCH_OBSERVABILITY: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    });
    const gw = gateway;
    log(`gateway on ${gw.url} (pid ${gw.pid}, up in ${(gw.startMs / 1000).toFixed(1)} s)`);
    const ctx: ScenarioContext = {
      ds,
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
    log('metrics and tracing: off/on in alternating rounds');
    const observed = reads.map((f) => runnable.find((s) => s.name === f.name) as ReadScenario);
    const observability = await measureObservability(observed, ctx, options.quick, log);
    log(`  OTLP sink received ${sink.requests} exports, ${Math.round(sink.bytes / 1024)} KiB`);
    const ingest: IngestFigure[] = [];
    for (const scenario of runnable.filter((s): s is IngestScenario => s.kind === 'ingest')) {
      const figure = await runIngest(scenario, ctx, options, log).catch((error: unknown) => {
        const reason = error instanceof SkipScenario ? error.message : `failed: ${String(error)}`;
        skipped.push({ name: scenario.name, reason });
        log(`skip ${scenario.name}: ${reason}`);
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
        body: (i) => body(r * 7919 + i),
      });
      const cpuMs = (await ctx.gateway.memory()).cpuMs - cpuBefore;
      errors += result.errors;
      statements.push(...result.statements);
      if (c === 1) gatewaySql.push(...result.sqlMs);
      const l = latency(result.latencies);
      perRun.push({
        requests: result.latencies.length,
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

  const overhead = await measureOverhead(scenario, ctx, options.quick ? 2 : 10, options.quick ? 3 : 7);
  log(
    `  ${scenario.name} overhead: ${overhead.e2eMs.toFixed(2)} ms end to end / ${overhead.sqlMs.toFixed(2)} ms SQL = ${overhead.ratio.toFixed(2)}×`,
  );
  return {
    name: scenario.name,
    title: scenario.title,
    ...(note ? { note } : {}),
    statements: statements.length ? { median: median(statements), max: Math.max(...statements) } : null,
    gatewaySqlMs: gatewaySql.length ? median(gatewaySql) : null,
    concurrency,
    overhead,
  };
}

/**
 * For a few requests: capture the statements the gateway runs, time the same request end to
 * end `repeats` times, replay its statements on the driver `repeats` times; ratio of medians.
 */
async function measureOverhead(
  scenario: ReadScenario,
  ctx: ScenarioContext,
  samples: number,
  repeats: number,
): Promise<Overhead> {
  const e2e: number[] = [];
  const sql: number[] = [];
  const sqlWall: number[] = [];
  const ratios: number[] = [];
  const wallRatios: number[] = [];
  const counts: number[] = [];
  let replayErrors = 0;
  const slowest = new Map<string, number[]>();
  for (let s = 0; s < samples; s++) {
    const variables = scenario.variables(ctx.ds, 5000 + s * 31);
    await ctx.gql(scenario.document, variables); // warm: caches, plans, loaders' code paths
    const times: number[] = [];
    const walls: number[] = [];
    for (let r = 0; r < repeats; r++) {
      await ctx.gateway.captureStart();
      const t = performance.now();
      await ctx.gql(scenario.document, variables);
      times.push(performance.now() - t);
      const summary = await ctx.gateway.captureStop();
      walls.push(summary.wallMs);
      if (r === 0) counts.push(summary.statements);
    }
    // The last request's statements, one after another on the driver.
    const replay = await ctx.gateway.replay(repeats);
    replayErrors += replay.errors;
    for (const { name, ms } of replay.byName) slowest.set(name, [...(slowest.get(name) ?? []), ms]);
    const e = median(times);
    const q = median(replay.totals);
    const w = median(walls);
    e2e.push(e);
    sql.push(q);
    sqlWall.push(w);
    ratios.push(q > 0 ? e / q : Number.NaN);
    wallRatios.push(w > 0 ? e / w : Number.NaN);
  }
  return {
    samples,
    e2eMs: median(e2e),
    sqlMs: median(sql),
    ratio: median(ratios),
    sqlWallMs: median(sqlWall),
    wallRatio: median(wallRatios),
    statements: median(counts),
    replayErrors,
    slowest: [...slowest.entries()]
      .map(([name, list]) => ({ name, ms: median(list) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3),
  };
}

async function runIngest(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  options: BenchOptions,
  log: Log,
): Promise<IngestFigure> {
  if (scenario.run) return runWhole(scenario, ctx, options, log);
  const batches = options.quick ? 1 : 3;
  const size = options.batchSize;
  const times: number[] = [];
  const rates: number[] = [];
  const statements: number[] = [];
  const floorMs: number[] = [];
  let items = 0;
  let rejected = 0;
  let firstRejection: string | undefined;
  const cpuBefore = (await ctx.gateway.memory()).cpuMs;
  for (let b = 0; b < batches; b++) {
    const batch = scenario.batch(ctx.ds, b, size);
    const t = performance.now();
    const answer = await ctx.gql(scenario.document, batch.variables);
    const ms = performance.now() - t;
    if (answer.status !== 200 || answer.errors?.length) {
      if (b === 0) throw new SkipScenario(`errors on the first batch: ${describeError(answer)}`);
      throw new Error(`batch ${b}: ${describeError(answer)}`);
    }
    const payload = Object.values(answer.data ?? {})[0] as
      | { rejected?: number; results?: { status: string; code?: string; message?: string }[] }
      | undefined;
    rejected += payload?.rejected ?? 0;
    const bad = payload?.results?.find((r) => r.status === 'REJECTED');
    if (bad && !firstRejection) firstRejection = `${bad.code ?? ''} ${bad.message ?? ''}`.trim();
    if (answer.extensions?.sql) statements.push(answer.extensions.sql.statements);
    times.push(ms);
    rates.push((batch.items / ms) * 1000);
    items += batch.items;
    if (scenario.floor) floorMs.push(await scenario.floor(ctx, b));
  }
  const total = times.reduce((a, b) => a + b, 0);
  const cpuMs = (await ctx.gateway.memory()).cpuMs - cpuBefore;
  const derivedCount = scenario.derived ? await scenario.derived(ctx) : null;
  const figure: IngestFigure = {
    name: scenario.name,
    title: scenario.title,
    unit: scenario.unit,
    batches,
    batchSize: size,
    items,
    perSec: (items / total) * 1000,
    perSecMedianBatch: median(rates),
    batchMs: latency(times),
    rejected,
    ...(firstRejection ? { firstRejection } : {}),
    statementsPerBatch: statements.length ? median(statements) : null,
    cpuMsPerItem: cpuMs / Math.max(1, items),
    ...(derivedCount ? { derived: { ...derivedCount, perSec: (derivedCount.count / total) * 1000 } } : {}),
  };
  const floorTotal = floorMs.reduce((a, b) => a + b, 0);
  if (floorMs.length > 0 && Number.isFinite(floorTotal) && floorTotal > 0) {
    const perSec = (items / floorTotal) * 1000;
    figure.floor = { perSec, ratio: figure.perSec / perSec };
  }
  log(
    `  ${scenario.name}: ${figure.perSec.toFixed(0)} ${scenario.unit}/s` +
      (figure.derived ? ` (${figure.derived.perSec.toFixed(0)} ${figure.derived.unit}/s)` : '') +
      (figure.floor
        ? `, ${figure.floor.ratio.toFixed(2)}× the hand-written floor (${figure.floor.perSec.toFixed(0)}/s)`
        : '') +
      (rejected ? `, ${rejected} rejected (${firstRejection})` : ''),
  );
  return figure;
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
