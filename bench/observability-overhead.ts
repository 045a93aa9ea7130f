/**
 * What /metrics and OpenTelemetry cost per request: the same scenarios on the same gateway
 * process with both off, on as shipped (metrics on, traces exported over OTLP/HTTP at the
 * default sampler's ratio) and on with every trace sampled, in rotating rounds. The traces go to
 * a sink in the runner that only counts what arrives.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from './http-load.js';
import { latency, median } from './stats.js';
import type { ObservabilityMode } from './gateway-child.js';
import type { IngestScenario, ReadScenario, ScenarioContext } from './scenarios/types.js';

export interface ObservabilityFigure {
  name: string;
  title: string;
  rounds: number;
  /** Requests (reads) or batches (writes) per round and side. */
  requestsPerRound: number;
  /** What CPU is divided by: `request`, or the item of a write batch (`observation`). */
  unit: string;
  /** Medians over the rounds of each side: both off, on as shipped, on with every trace sampled. */
  off: Side;
  on: Side;
  full?: Side;
  /** (on − off) ÷ off, in percent, of the median latency and of the gateway CPU per request. */
  p50OverheadPct: number;
  cpuOverheadPct: number;
  /**
   * The same for the best (least CPU) round of each side: other load on the machine only ever
   * adds time, so the minimum is the steadier estimate of the intrinsic cost on a busy host.
   */
  bestCpuMsPerRequest: { off: number; on: number; full?: number };
  bestCpuOverheadPct: number;
  /**
   * The median over rounds of each round's own (on − off) ÷ off: the sides of a round run back to
   * back, so a slower stretch of the machine falls on both, where medians taken apart mix rounds.
   */
  pairedCpuOverheadPct?: number;
  /** Gateway CPU per request (or item) of every round and side, in round order. */
  roundsCpuMs?: Record<ObservabilityMode, number[]>;
  /** The same three figures with every request traced (OTEL_TRACES_SAMPLER=always_on). */
  fullSampling?: { p50OverheadPct: number; cpuOverheadPct: number; bestCpuOverheadPct: number };
}

export interface OtlpSink {
  url: string;
  requests: number;
  bytes: number;
  close(): Promise<void>;
}

/** An OTLP/HTTP endpoint that accepts every export and keeps only the byte count. */
export async function startOtlpSink(): Promise<OtlpSink> {
  const sink = { requests: 0, bytes: 0 };
  const server: Server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      sink.bytes += chunk.length;
    });
    req.on('end', () => {
      sink.requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

export const OBSERVED_SCENARIOS = ['entity', 'page', 'walk', 'search', 'context'];
export const OBSERVED_INGEST = 'recordObservations';

const PROFILE_DIR = process.env.MEMGATE_BENCH_PROFILE_DIR;

const MODES: readonly ObservabilityMode[] = ['off', 'on', 'full'];

/** One side's work in a round: what it took, per request (reads) or per item (writes). */
interface Workload {
  name: string;
  title: string;
  unit: string;
  perRound: number;
  /** Untimed, on the side just switched to. */
  warm(round: number): Promise<void>;
  /** The timed work of `round` on side `side`: its latencies and the items they carried. */
  run(round: number, side: number): Promise<{ latencies: number[]; items: number }>;
}

/**
 * Each workload's cost with metrics and tracing off, on as shipped, and on with every trace
 * sampled: rounds of the three sides on the same gateway process, the order rotating from round
 * to round, so that drift and warm caches fall on all of them alike.
 */
export async function measureObservability(
  scenarios: ReadScenario[],
  ingest: IngestScenario | undefined,
  ctx: ScenarioContext,
  quick: boolean,
  log: (msg: string) => void,
): Promise<ObservabilityFigure[]> {
  const rounds = quick ? 6 : 12;
  const reads = scenarios.filter((s) => OBSERVED_SCENARIOS.includes(s.name));
  const workloads: (() => Promise<Workload>)[] = [
    ...reads.map((s) => () => readWorkload(s, ctx, quick)),
    ...(ingest ? [() => ingestWorkload(ingest, ctx, quick)] : []),
  ];
  const figures: ObservabilityFigure[] = [];
  for (const prepare of workloads) {
    const workload = await prepare();
    const sides: Record<ObservabilityMode, Side[]> = { off: [], on: [], full: [] };
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < MODES.length; k++) {
        const side = (r + k) % MODES.length;
        const mode = MODES[side]!;
        await ctx.gateway.observability(mode);
        await workload.warm(r);
        // MEMGATE_BENCH_PROFILE_DIR: a CPU profile of each side's last round, to see where it goes.
        const profile = PROFILE_DIR && r === rounds - 1;
        if (profile) await ctx.gateway.profileStart();
        const cpuBefore = (await ctx.gateway.memory()).cpuMs;
        const { latencies, items } = await workload.run(r, side);
        const cpuMs = (await ctx.gateway.memory()).cpuMs - cpuBefore;
        if (profile) await ctx.gateway.profileStop(`${PROFILE_DIR}/${workload.name}-${mode}.cpuprofile`);
        const l = latency(latencies);
        sides[mode].push({ p50: l.p50, mean: l.mean, cpuMsPerRequest: cpuMs / Math.max(1, items) });
      }
    }
    await ctx.gateway.observability('off');
    const figure = figureOf(workload, rounds, sides);
    log(describe(figure));
    figures.push(figure);
  }
  return figures;
}

/**
 * A read's requests per round: as many as fill about ROUND_MS (a cheap read's CPU per request
 * is otherwise at the mercy of where a garbage collection falls), at least MIN_REQUESTS.
 */
async function readWorkload(scenario: ReadScenario, ctx: ScenarioContext, quick: boolean): Promise<Workload> {
  const body = (i: number) =>
    JSON.stringify({ query: scenario.document, variables: scenario.variables(ctx.ds, i) });
  const load = (n: number, first: number) =>
    runLoad({
      url: ctx.gateway.url,
      concurrency: 1,
      requests: n,
      maxMs: 60_000,
      body: (i) => body(first + i),
    });
  await ctx.gateway.observability('off');
  const probe = await load(20, 0);
  const perRequest = Math.max(0.1, median(probe.latencies));
  const requests = quick
    ? 30
    : Math.min(MAX_REQUESTS, Math.max(MIN_REQUESTS, Math.round(ROUND_MS / perRequest)));
  return {
    name: scenario.name,
    title: scenario.title,
    unit: 'request',
    perRound: requests,
    warm: async () => {
      await load(5, 0);
    },
    // The same request indexes on every side of a round: identical work.
    run: async (round) => {
      const result = await load(requests, round * 7919);
      return { latencies: result.latencies, items: result.latencies.length };
    },
  };
}

/**
 * Batches of a write scenario: each side of a round writes a batch of its own (a batch written
 * twice would only be deduplicated), of the same shape and size. Its `ns` variable is replaced.
 */
async function ingestWorkload(
  scenario: IngestScenario,
  ctx: ScenarioContext,
  quick: boolean,
): Promise<Workload> {
  await scenario.setup?.(ctx);
  const size = quick ? 20 : 100;
  const batches = quick ? 1 : 2;
  let next = OBSERVED_BATCHES;
  const send = async (b: number) => {
    const batch = scenario.batch(ctx.ds, b, size);
    // A namespace of its own: the ingest figures' namespace stays as they expect it.
    const variables = { ...batch.variables, ns: OBSERVED_NAMESPACE };
    const started = performance.now();
    const answer = await ctx.gql(scenario.document, variables);
    if (answer.errors?.length) throw new Error(`${scenario.name}: ${answer.errors[0]?.message}`);
    return { ms: performance.now() - started, items: batch.items };
  };
  return {
    name: scenario.name,
    title: `${scenario.title}, batches of ${size}`,
    unit: scenario.unit,
    perRound: batches,
    warm: async () => {
      await send(next++);
    },
    run: async () => {
      const latencies: number[] = [];
      let items = 0;
      for (let i = 0; i < batches; i++) {
        const sent = await send(next++);
        latencies.push(sent.ms);
        items += sent.items;
      }
      return { latencies, items };
    },
  };
}

const ROUND_MS = 1500;
const MIN_REQUESTS = 60;
const MAX_REQUESTS = 1000;

const OBSERVED_NAMESPACE = 'bench-observed';

/** Batch numbers of the comparison's writes: far from those the ingest figures write. */
const OBSERVED_BATCHES = 100_000;

function figureOf(
  workload: Workload,
  rounds: number,
  sides: Record<ObservabilityMode, Side[]>,
): ObservabilityFigure {
  const [off, on, full] = MODES.map((m) => summarise(sides[m])) as [Side, Side, Side];
  const best = (m: ObservabilityMode) => Math.min(...sides[m].map((s) => s.cpuMsPerRequest));
  return {
    name: workload.name,
    title: workload.title,
    rounds,
    requestsPerRound: workload.perRound,
    unit: workload.unit,
    off,
    on,
    full,
    p50OverheadPct: percent(on.p50, off.p50),
    cpuOverheadPct: percent(on.cpuMsPerRequest, off.cpuMsPerRequest),
    bestCpuMsPerRequest: { off: best('off'), on: best('on'), full: best('full') },
    bestCpuOverheadPct: percent(best('on'), best('off')),
    pairedCpuOverheadPct: pairedPercent(sides.on, sides.off),
    roundsCpuMs: {
      off: sides.off.map((s) => s.cpuMsPerRequest),
      on: sides.on.map((s) => s.cpuMsPerRequest),
      full: sides.full.map((s) => s.cpuMsPerRequest),
    },
    fullSampling: {
      p50OverheadPct: percent(full.p50, off.p50),
      cpuOverheadPct: percent(full.cpuMsPerRequest, off.cpuMsPerRequest),
      bestCpuOverheadPct: percent(best('full'), best('off')),
    },
  };
}

function describe(f: ObservabilityFigure): string {
  const cpu = (s: Side) => s.cpuMsPerRequest.toFixed(3);
  return (
    `  ${f.name}: p50 off ${f.off.p50.toFixed(2)} / on ${f.on.p50.toFixed(2)} ms (${f.p50OverheadPct}%), ` +
    `gateway CPU per ${f.unit} off ${cpu(f.off)} / on ${cpu(f.on)} ms (${f.cpuOverheadPct}%, paired by round ${f.pairedCpuOverheadPct}%, best rounds ${f.bestCpuOverheadPct}%), ` +
    `every trace sampled ${f.full ? cpu(f.full) : '–'} ms (${f.fullSampling?.cpuOverheadPct}%)`
  );
}

export interface Side {
  p50: number;
  mean: number;
  cpuMsPerRequest: number;
}

function summarise(sides: Side[]): Side {
  return {
    p50: median(sides.map((s) => s.p50)),
    mean: median(sides.map((s) => s.mean)),
    cpuMsPerRequest: median(sides.map((s) => s.cpuMsPerRequest)),
  };
}

/** Median of the per-round percentages of `on` over `off` (sides of the same round paired). */
function pairedPercent(on: Side[], off: Side[]): number {
  const ratios = on.map((s, r) => s.cpuMsPerRequest / (off[r]?.cpuMsPerRequest ?? Number.NaN) - 1);
  const finite = ratios.filter(Number.isFinite);
  return finite.length ? Math.round(median(finite) * 1000) / 10 : 0;
}

function percent(on: number, off: number): number {
  return off > 0 ? Math.round(((on - off) / off) * 1000) / 10 : 0;
}
