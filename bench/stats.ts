/** Order statistics for latency samples and run summaries. */

/** Percentile by linear interpolation between closest ranks; `p` in [0, 100]. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export interface Latency {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
  n: number;
}

export function latency(values: readonly number[]): Latency {
  return {
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    mean: values.reduce((a, b) => a + b, 0) / Math.max(1, values.length),
    max: values.length ? Math.max(...values) : Number.NaN,
    n: values.length,
  };
}

/** Rounds for reports: 3 significant digits, at most 3 decimals. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (value === 0) return 0;
  const digits = Math.max(0, Math.min(3, 2 - Math.floor(Math.log10(Math.abs(value)))));
  return Number(value.toFixed(digits));
}
