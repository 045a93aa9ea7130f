/**
 * Seeded randomness for the generator: the same seed gives the same dataset on every machine
 * and backend, so figures from two runs describe the same data.
 */

/** mulberry32: a tiny, fast 32-bit generator with a full 2^32 period; floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  float(): number {
    return this.next();
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A child generator whose stream does not depend on how much of this one was consumed later. */
  fork(salt: number): Rng {
    return new Rng(Math.imul(this.int(0x7fffffff) ^ salt, 0x9e3779b1) >>> 0 || 1);
  }
}

/**
 * Zipf sampler over ranks 0..n-1 with P(rank r) ∝ (r + 1)^-s, by binary search over the
 * cumulative weights. With s ≈ 0.7 and n = 100k entities, 1M edge endpoints give the top node
 * about 10k edges: a power-law graph with a few hubs and a long tail of degree-1 nodes.
 */
export class Zipf {
  private readonly cdf: Float64Array;

  constructor(
    readonly n: number,
    readonly s: number,
  ) {
    this.cdf = new Float64Array(n);
    let total = 0;
    for (let r = 0; r < n; r++) {
      total += (r + 1) ** -s;
      this.cdf[r] = total;
    }
    for (let r = 0; r < n; r++) this.cdf[r]! /= total;
  }

  sample(rng: Rng): number {
    const u = rng.float();
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A deterministic permutation of 0..n-1 (Fisher–Yates), so Zipf ranks do not follow key order. */
export function permutation(n: number, rng: Rng): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}
