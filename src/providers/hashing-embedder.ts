import { type Embedder, hash32, l2Normalise, tokenize } from './embedder.js';

export const DEFAULT_HASHING_DIMENSIONS = 64;

// Trigrams count for less than whole words: they only add typo and inflection tolerance.
const TRIGRAM_WEIGHT = 0.5;
const SIGN_SEED = 0x9e3779b9;

/**
 * Deterministic feature hashing (word unigrams + character trigrams, signed buckets).
 * Meant for tests: instant, no files, and texts sharing words get similar vectors.
 */
export function createHashingEmbedder(dimensions = DEFAULT_HASHING_DIMENSIONS): Embedder {
  if (!Number.isInteger(dimensions) || dimensions < 2) {
    throw new Error(`hashing embedder: dimensions must be an integer >= 2, got ${dimensions}`);
  }
  return {
    model: `hashing:${dimensions}`,
    dimensions,
    embed: async (texts) => texts.map((text) => hashingVector(text, dimensions)),
  };
}

/** Exported for the offline embedder, which falls back to it for texts without a known word. */
export function hashingVector(text: string, dimensions: number): number[] {
  const vector = new Float64Array(dimensions);
  const add = (feature: string, weight: number): void => {
    const bucket = hash32(feature) % dimensions;
    const sign = hash32(feature, SIGN_SEED) & 1 ? 1 : -1;
    vector[bucket]! += sign * weight;
  };
  for (const token of tokenize(text)) {
    add(`w:${token}`, 1);
    const padded = `#${token}#`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
  }
  // Signed buckets can cancel out exactly (or the text may hold no token at all): fall back to
  // a vector keyed on the raw text so the result is never zero and still deterministic.
  const normalised = l2Normalise(vector);
  if (normalised) return normalised;
  const fallback = new Float64Array(dimensions);
  fallback[hash32(`raw:${text}`) % dimensions] = 1;
  return Array.from(fallback);
}
