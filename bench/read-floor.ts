/**
 * memgate ÷ its SQL floor, per read scenario, from the run that measured it: the statements of
 * the distinct requests its latency run sent are captured from the gateway, then replayed on
 * the gateway's own driver with no GraphQL and no services (floor-replay.ts): once each after
 * one warm-up pass (latency), then by concurrent workers for as long as memgate's concurrent
 * runs took (throughput). The gateway-overhead figures come from the same captured set.
 */
import type { CaptureSummary } from './capture.js';
import type { RequestReplay } from './floor-replay.js';
import { describeError } from './http-load.js';
import type { Overhead, ReadRun } from './runner.js';
import type { ReadScenario, ScenarioContext } from './scenarios/types.js';
import { median } from './stats.js';

/** Clients of the floor's throughput figure (the largest measured when 32 was not). */
export const FLOOR_CONCURRENCY = 32;

export interface ReadFloor {
  /** Distinct requests captured and replayed (the latency run's queries). */
  requests: number;
  /** Median and most statements per captured request. */
  statementsPerRequest: number;
  statementsMax: number;
  /** A request's statements on replay: one after another, in the order the gateway issued them. */
  order: 'sequential';
  /** Median over the captured requests of the sum of their statements' times, one client (ms). */
  p50: number;
  /** memgate's p50 at one client (ms), and that ÷ the floor's. */
  memgateP50: number | null;
  p50Ratio: number | null;
  /** Workers of the throughput figure; null when memgate ran no concurrent clients. */
  concurrency: number | null;
  /** Whole requests replayed per second (median over runs, each as long as memgate's run). */
  rps: number | null;
  /** memgate's req/s at that concurrency, and that ÷ the floor's. */
  memgateRps: number | null;
  throughputRatio: number | null;
  throughputRuns: { durationMs: number; requests: number; wallMs: number; rps: number }[];
  /** Statements that failed on replay, warm-up included (none expected). */
  replayErrors: number;
  firstReplayError?: string;
}

/** One captured request: its end-to-end time (capture on) and what the capture saw. */
interface CapturedRequest {
  e2eMs: number;
  capture: CaptureSummary;
  /** `extensions.sql.statements` of the answer: what the gateway counted for the request. */
  gatewayStatements: number | null;
}

/** `memgate ÷ floor`, or null when either side is missing or not a positive figure. */
export function floorRatio(
  memgate: number | null | undefined,
  floor: number | null | undefined,
): number | null {
  if (memgate == null || floor == null) return null;
  if (!Number.isFinite(memgate) || !Number.isFinite(floor) || floor <= 0) return null;
  return memgate / floor;
}

/** The distinct variables of requests `indices` (first use first), as the scenario builds them. */
export function distinctVariables(
  scenario: Pick<ReadScenario, 'variables'>,
  ds: Parameters<ReadScenario['variables']>[0],
  indices: readonly number[],
): Record<string, unknown>[] {
  const seen = new Map<string, Record<string, unknown>>();
  for (const i of indices) {
    const variables = scenario.variables(ds, i);
    const key = JSON.stringify(variables);
    if (!seen.has(key)) seen.set(key, variables);
  }
  return [...seen.values()];
}

/**
 * The floor (native PostgreSQL; null on PGlite, whose single in-process connection has no
 * concurrent throughput to compare) and the overhead figures, both from one captured set.
 */
export async function measureReadFloor(
  scenario: ReadScenario,
  ctx: ScenarioContext,
  indices: readonly number[],
  runs: readonly ReadRun[],
): Promise<{ floor: ReadFloor | null; overhead: Overhead }> {
  const captured = await captureRequests(scenario, ctx, distinctVariables(scenario, ctx.ds, indices));
  const mismatched = captured.filter(
    (c) => c.gatewayStatements !== null && c.gatewayStatements !== c.capture.statements,
  ).length;
  if (mismatched)
    ctx.log(`  ${scenario.name}: ${mismatched} captures differ from the gateway's own statement count`);
  // First use (parsing, planning on each connection) is not the floor's to count.
  const warm = await ctx.gateway.floorReplayEach();
  const replays = await ctx.gateway.floorReplayEach();
  const overhead = overheadOf(captured, replays, errorsOf(warm).count);
  if (ctx.backend !== 'postgres') return { floor: null, overhead };
  const firstError = errorsOf(warm).first ?? errorsOf(replays).first;
  const floor: ReadFloor = {
    requests: captured.length,
    statementsPerRequest: median(captured.map((c) => c.capture.statements)),
    statementsMax: Math.max(...captured.map((c) => c.capture.statements)),
    order: 'sequential',
    p50: median(replays.map((r) => r.ms)),
    memgateP50: null,
    p50Ratio: null,
    concurrency: null,
    rps: null,
    memgateRps: null,
    throughputRatio: null,
    throughputRuns: [],
    replayErrors: overhead.replayErrors,
    ...(firstError ? { firstReplayError: firstError } : {}),
  };
  const one = runs.find((r) => r.concurrency === 1);
  floor.memgateP50 = one?.p50 ?? null;
  floor.p50Ratio = floorRatio(floor.memgateP50, floor.p50);
  await measureThroughput(ctx, floor, runs);
  return { floor, overhead };
}

/** Captures each request's statements into the gateway's floor set, timing it end to end. */
async function captureRequests(
  scenario: ReadScenario,
  ctx: ScenarioContext,
  requests: readonly Record<string, unknown>[],
): Promise<CapturedRequest[]> {
  await ctx.gateway.floorClear();
  const captured: CapturedRequest[] = [];
  for (const variables of requests) {
    await ctx.gateway.captureStart();
    const t = performance.now();
    const answer = await ctx.gql(scenario.document, variables);
    const e2eMs = performance.now() - t;
    const capture = await ctx.gateway.captureStop(true);
    if (answer.status !== 200 || answer.errors?.length)
      throw new Error(`capturing the floor's requests: ${describeError(answer)}`);
    captured.push({ e2eMs, capture, gatewayStatements: answer.extensions?.sql?.statements ?? null });
  }
  return captured;
}

/**
 * The floor's requests per second with as many workers as memgate's most concurrent figure
 * (32 by default), one replay run per memgate run, each as long as that run took.
 */
async function measureThroughput(ctx: ScenarioContext, floor: ReadFloor, runs: readonly ReadRun[]) {
  const concurrent = runs.filter((r) => r.concurrency > 1);
  const run =
    concurrent.find((r) => r.concurrency === FLOOR_CONCURRENCY) ??
    concurrent.sort((a, b) => b.concurrency - a.concurrency)[0];
  if (!run) return;
  for (const memgateRun of run.perRun) {
    const replay = await ctx.gateway.floorThroughput(run.concurrency, memgateRun.wallMs);
    floor.replayErrors += replay.errors;
    if (replay.firstError) floor.firstReplayError ??= replay.firstError;
    floor.throughputRuns.push({
      durationMs: memgateRun.wallMs,
      requests: replay.requests,
      wallMs: replay.wallMs,
      rps: (replay.requests / replay.wallMs) * 1000,
    });
  }
  floor.concurrency = run.concurrency;
  floor.rps = median(floor.throughputRuns.map((r) => r.rps));
  floor.memgateRps = run.rps;
  floor.throughputRatio = floorRatio(floor.memgateRps, floor.rps);
}

function errorsOf(replays: readonly RequestReplay[]): { count: number; first?: string } {
  const first = replays.find((r) => r.firstError)?.firstError;
  return { count: replays.reduce((n, r) => n + r.errors, 0), ...(first ? { first } : {}) };
}

/**
 * Per captured request: end to end ÷ its statements replayed one after another, and ÷ the wall
 * time its statements were in flight in the gateway; medians over the set. `warmErrors` are
 * the warm-up pass's failed statements, counted with the measured pass's.
 */
export function overheadOf(
  captured: readonly CapturedRequest[],
  replays: readonly RequestReplay[],
  warmErrors: number,
): Overhead {
  const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
  const byName = new Map<string, number[]>();
  for (const r of replays)
    for (const [name, ms] of Object.entries(r.byName)) byName.set(name, [...(byName.get(name) ?? []), ms]);
  return {
    samples: captured.length,
    e2eMs: median(captured.map((c) => c.e2eMs)),
    sqlMs: median(replays.map((r) => r.ms)),
    ratio: median(captured.map((c, k) => ratio(c.e2eMs, replays[k]!.ms))),
    sqlWallMs: median(captured.map((c) => c.capture.wallMs)),
    wallRatio: median(captured.map((c) => ratio(c.e2eMs, c.capture.wallMs))),
    statements: median(captured.map((c) => c.capture.statements)),
    replayErrors: warmErrors + errorsOf(replays).count,
    slowest: [...byName.entries()]
      .map(([name, list]) => ({ name, ms: median(list) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3),
  };
}
