/**
 * Per-round figures of the peer benchmark and the ratios reported from them: each ratio is
 * computed inside a round (both sides measured back to back on the same machine state) and
 * the median over the rounds is reported, so load from other processes cancels out.
 */
import { median, percentile, round } from '../stats.js';

export type System = 'memgate' | 'postgraphile' | 'floor' | 'mem0';

export interface Sample {
  p50: number;
  p95: number;
  /** Requests per second over the run (wall time). */
  rps: number;
  errors: number;
  /** Median SQL statements per request, when the system reports them (memgate). */
  statements: number | null;
}

/** samples[shape][concurrency][system] = one Sample per round. */
export type Rounds = Record<string, Record<number, Partial<Record<System, Sample[]>>>>;

export function sampleOf(latencies: number[], wallMs: number, errors: number, statements: number[]): Sample {
  return {
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    rps: wallMs > 0 ? (latencies.length * 1000) / wallMs : 0,
    errors,
    statements: statements.length ? median(statements) : null,
  };
}

export function addSample(rounds: Rounds, shape: string, c: number, system: System, s: Sample): void {
  rounds[shape] ??= {};
  const byConcurrency = rounds[shape];
  byConcurrency[c] ??= {};
  const bySystem = byConcurrency[c];
  bySystem[system] ??= [];
  bySystem[system].push(s);
}

/** Median over rounds of (a ÷ b) of `pick`, pairing round k of a with round k of b. */
export function medianRatio(
  a: Sample[] | undefined,
  b: Sample[] | undefined,
  pick: (s: Sample) => number,
): number | null {
  if (!a?.length || !b?.length) return null;
  const ratios: number[] = [];
  for (let k = 0; k < Math.min(a.length, b.length); k++) {
    const den = pick(b[k]!);
    if (den > 0) ratios.push(pick(a[k]!) / den);
  }
  return ratios.length ? round(median(ratios)) : null;
}

export interface ShapeRatios {
  shape: string;
  title: string;
  /** memgate ÷ PostGraphile and memgate ÷ floor, median p50 at one client. */
  p50VsPostgraphile: number | null;
  p50VsFloor: number | null;
  /** memgate ÷ PostGraphile and memgate ÷ floor, requests per second at many clients. */
  throughputVsPostgraphile: number | null;
  throughputVsFloor: number | null;
  statementsPerRequest: number | null;
  /** Medians over rounds per system and client count: p50 ms, p95 ms, req/s. */
  figures: Record<string, Partial<Record<System, { p50: number; p95: number; rps: number; errors: number }>>>;
}

export function shapeRatios(
  rounds: Rounds,
  shape: string,
  title: string,
  one: number,
  many: number,
): ShapeRatios {
  const at = (c: number, s: System) => rounds[shape]?.[c]?.[s];
  const p50 = (s: Sample) => s.p50;
  const rps = (s: Sample) => s.rps;
  const figures: ShapeRatios['figures'] = {};
  for (const [c, bySystem] of Object.entries(rounds[shape] ?? {})) {
    const row: ShapeRatios['figures'][string] = {};
    for (const [system, samples] of Object.entries(bySystem) as [System, Sample[]][]) {
      row[system] = {
        p50: round(median(samples.map(p50))),
        p95: round(median(samples.map((s) => s.p95))),
        rps: round(median(samples.map(rps))),
        errors: samples.reduce((a, s) => a + s.errors, 0),
      };
    }
    figures[c] = row;
  }
  const statements = [...(at(one, 'memgate') ?? []), ...(at(many, 'memgate') ?? [])]
    .map((s) => s.statements)
    .filter((n): n is number => n !== null);
  return {
    shape,
    title,
    p50VsPostgraphile: medianRatio(at(one, 'memgate'), at(one, 'postgraphile'), p50),
    p50VsFloor: medianRatio(at(one, 'memgate'), at(one, 'floor'), p50),
    throughputVsPostgraphile: medianRatio(at(many, 'memgate'), at(many, 'postgraphile'), rps),
    throughputVsFloor: medianRatio(at(many, 'memgate'), at(many, 'floor'), rps),
    statementsPerRequest: statements.length ? median(statements) : null,
    figures,
  };
}

export const TARGETS = {
  p50VsPostgraphile: 1.2,
  p50VsFloor: 1.3,
  throughputVsPostgraphile: 0.8,
  searchVsMem0: 0.1,
  statementsPerRequest: 2,
};

/** Whether a shape meets the targets (null where a figure is missing). */
export function meetsTargets(r: ShapeRatios): boolean | null {
  const { p50VsPostgraphile: a, p50VsFloor: b, throughputVsPostgraphile: t, statementsPerRequest: n } = r;
  if (a === null || b === null || t === null || n === null) return null;
  return (
    a <= TARGETS.p50VsPostgraphile &&
    b <= TARGETS.p50VsFloor &&
    t >= TARGETS.throughputVsPostgraphile &&
    n <= TARGETS.statementsPerRequest
  );
}
