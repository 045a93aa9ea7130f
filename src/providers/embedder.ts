/**
 * The embedding contract shared by every provider, plus the small text and vector helpers
 * the providers have in common.
 */
export interface Embedder {
  /** Recorded in the database settings row, e.g. "offline:wink-sg-100d-sif". */
  readonly model: string;
  readonly dimensions: number;
  /** Unit-normalised vectors, in the order of `texts`. */
  embed(texts: string[]): Promise<number[][]>;
}

// Letters and digits in any script; everything else separates tokens.
const TOKEN_SEPARATOR = /[^\p{L}\p{N}]+/u;

/** Lowercased word tokens; NFKC first so full-width and ligature forms match plain ones. */
export function tokenize(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(TOKEN_SEPARATOR)
    .filter((token) => token.length > 0);
}

/** Divides by the L2 norm; returns null for a zero (or non-finite) vector so callers pick a fallback. */
export function l2Normalise(vector: ArrayLike<number>): number[] | null {
  let sumOfSquares = 0;
  for (let i = 0; i < vector.length; i++) sumOfSquares += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sumOfSquares);
  if (!(norm > 0) || !Number.isFinite(norm)) return null;
  return Array.from(vector, (value) => value / norm);
}

/**
 * 32-bit FNV-1a over the UTF-16 code units with a murmur3 finaliser (plain FNV mixes the low
 * bits poorly, and buckets are taken modulo small sizes). Stable across runs and platforms.
 */
export function hash32(text: string, seed = 0): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
