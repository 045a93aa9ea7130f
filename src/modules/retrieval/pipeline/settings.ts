import { z } from 'zod';
import {
  CHANNELS,
  DEFAULT_RRF_K,
  DEFAULT_WEIGHTS,
  SEARCH_CHANNELS,
  type SearchChannel,
} from './vocabulary.js';

/**
 * Retrieval as data: which channels run, their parameters and fusion weights, and rerank.
 * Named presets are the strategies; a request starts from one and overrides what it states.
 * Every value here was either fixed by the design (RRF k 60, BM25 k1 1.2 / b 0.75, rerank
 * 12 s) or measured on the LoCoMo dev split (weights of the offline embedder).
 */

/** The channels with a settings block (search's); the compiler adds facts and recent. */
export { SEARCH_CHANNELS as CHANNELS };
export type ChannelName = SearchChannel;

const weight = z.number().min(0).max(100);

export const vectorSettingsSchema = z.object({
  enabled: z.boolean(),
  weight,
  /**
   * HNSW candidate list. Filters (namespace, visibility, meta) apply on top of the index, so the
   * scan runs iteratively until the pool is full; ef_search sets the recall of each step.
   */
  efSearch: z.number().int().min(10).max(1000),
});

export const lexicalSettingsSchema = z.object({
  enabled: z.boolean(),
  weight,
  /** Okapi BM25 term-frequency saturation. */
  k1: z.number().min(0).max(10),
  /** Okapi BM25 length normalisation. */
  b: z.number().min(0).max(1),
  /** At most this many query lexemes are scored (the rarest first); bounds hostile 10 KB queries. */
  maxTerms: z.number().int().min(1).max(256),
});

export const exactSettingsSchema = z.object({
  enabled: z.boolean(),
  weight,
  /** At most this many identifier-like tokens are looked up. */
  maxTokens: z.number().int().min(1).max(32),
  /** Near matches by trigram similarity too (costly at 100k chunks; see channels/exact.ts). */
  fuzzy: z.boolean(),
});

export const graphSettingsSchema = z.object({
  enabled: z.boolean(),
  weight,
  /** Hits whose entities seed the walk. */
  seeds: z.number().int().min(1).max(100),
  maxNodes: z.number().int().min(1).max(200),
  /** Edges followed out of one node per step, newest first: bounds hubs. */
  maxEdgesPerNode: z.number().int().min(1).max(1000),
});

export const rerankSettingsSchema = z.object({
  /** Candidates from the fused list (the "vector hits" of the seed: every channel's best). */
  poolSize: z.number().int().min(1).max(50),
  /** Characters of each candidate shown to the model. */
  charsPerCandidate: z.number().int().min(50).max(4000),
  timeoutMs: z.number().int().min(100).max(120_000),
});

export const synthesisSettingsSchema = z.object({
  temperature: z.number().min(0).max(2),
  timeoutMs: z.number().int().min(100).max(300_000),
  maxTokens: z.number().int().min(16).max(8192),
});

export const retrievalSettingsSchema = z.object({
  vector: vectorSettingsSchema,
  lexical: lexicalSettingsSchema,
  exact: exactSettingsSchema,
  graph: graphSettingsSchema,
  rrfK: z.number().int().min(0).max(1000),
  rerank: rerankSettingsSchema,
  synthesis: synthesisSettingsSchema,
});
export type RetrievalSettings = z.infer<typeof retrievalSettingsSchema>;

/** Per-request overrides, as the GraphQL `ChannelWeights` input carries them. */
export const channelWeightsSchema = z
  .object(
    Object.fromEntries(CHANNELS.map((c) => [c, weight.nullish()])) as Record<
      (typeof CHANNELS)[number],
      z.ZodOptional<z.ZodNullable<typeof weight>>
    >,
  )
  .strict();
export type ChannelWeights = z.infer<typeof channelWeightsSchema>;

/**
 * Vector weight against lexical 1.0, by embedder family. Real embedding models are peers of
 * BM25. The offline SIF embedder is not: on the LoCoMo dev split (`npm run eval:locomo --
 * FILE… --sweep …`, 997 questions) it finds R@10 0.405 / MRR 0.257 against BM25's 0.631 /
 * 0.467; fused at 0.35 it pulls HYBRID down to 0.606 / 0.416, at 0.1 R@10 rises (0.639) but
 * MRR falls (0.449). At 0.02 it breaks near-ties of BM25 and helps every measure a little:
 * R@5 0.559, R@10 0.632, MRR 0.472 (with session context: 0.655 / 0.731 / 0.522 against
 * BM25's 0.649 / 0.730 / 0.514).
 */
export const VECTOR_WEIGHT_BY_EMBEDDER: ReadonlyArray<[prefix: string, weight: number]> = [
  ['offline:', 0.02],
  ['openai:', 1.0],
];

export function vectorWeightFor(embedderModel: string): number {
  for (const [prefix, w] of VECTOR_WEIGHT_BY_EMBEDDER) if (embedderModel.startsWith(prefix)) return w;
  return 1.0;
}

const BASE: RetrievalSettings = {
  vector: { enabled: true, weight: DEFAULT_WEIGHTS.vector, efSearch: 100 },
  lexical: { enabled: true, weight: DEFAULT_WEIGHTS.lexical, k1: 1.2, b: 0.75, maxTerms: 64 },
  // An identifier the caller typed is strong evidence; its bonus (+0.010) does the rest.
  exact: { enabled: true, weight: DEFAULT_WEIGHTS.exact, maxTokens: 8, fuzzy: false },
  graph: { enabled: true, weight: DEFAULT_WEIGHTS.graph, seeds: 8, maxNodes: 40, maxEdgesPerNode: 50 },
  rrfK: DEFAULT_RRF_K,
  // The seed's rerank pool: up to 12 hits plus neighbours with text, 600 characters each.
  rerank: { poolSize: 12, charsPerCandidate: 600, timeoutMs: 12_000 },
  synthesis: { temperature: 0.1, timeoutMs: 25_000, maxTokens: 800 },
};

export type PresetName = 'hybrid' | 'semantic' | 'lexical' | 'exact' | 'graph';

/**
 * The strategies. `hybrid` runs every channel; `semantic` only vector; `lexical` BM25 plus
 * exact identifiers; `exact` only identifiers; `graph` only the neighbourhood of anchors
 * (used by the context compiler, which supplies the anchors).
 */
export const PRESETS: Readonly<Record<PresetName, (s: RetrievalSettings) => RetrievalSettings>> = {
  hybrid: (s) => s,
  semantic: (s) => only(s, ['vector', 'graph']),
  lexical: (s) => only(s, ['lexical', 'exact', 'graph']),
  exact: (s) => only(s, ['exact', 'graph']),
  graph: (s) => only(s, ['graph']),
};

function only(s: RetrievalSettings, keep: ChannelName[]): RetrievalSettings {
  const out = { ...s };
  for (const c of SEARCH_CHANNELS) out[c] = { ...s[c], enabled: keep.includes(c) } as never;
  return out;
}

export interface SettingsOptions {
  preset?: PresetName;
  /** The configured embedder's model name; picks the default vector weight. */
  embedderModel?: string;
  weights?: ChannelWeights | null;
  rrfK?: number | null;
  /** Anything else to override (validated as a whole afterwards). */
  patch?: (s: RetrievalSettings) => RetrievalSettings;
}

/** Defaults → embedder-fitted vector weight → preset → request weights/rrfK → patch; validated. */
export function resolveSettings(options: SettingsOptions = {}): RetrievalSettings {
  // Most reads ask for a preset and nothing else: those are validated once per process, and
  // each caller still gets its own copy.
  if (!options.weights && options.rrfK == null && !options.patch) {
    const key = `${options.preset ?? 'hybrid'}\u0000${options.embedderModel ?? ''}`;
    let resolved = RESOLVED_PRESETS.get(key);
    if (!resolved) {
      resolved = validatedSettings(options);
      RESOLVED_PRESETS.set(key, resolved);
    }
    return structuredClone(resolved);
  }
  return validatedSettings(options);
}

const RESOLVED_PRESETS = new Map<string, RetrievalSettings>();

function validatedSettings(options: SettingsOptions): RetrievalSettings {
  let s: RetrievalSettings = structuredClone(BASE);
  if (options.embedderModel) s.vector.weight = vectorWeightFor(options.embedderModel);
  s = PRESETS[options.preset ?? 'hybrid'](s);
  const w = options.weights;
  if (w) {
    for (const c of SEARCH_CHANNELS) {
      const given = w[c];
      if (given != null) s[c].weight = given;
    }
  }
  if (options.rrfK != null) s.rrfK = options.rrfK;
  if (options.patch) s = options.patch(s);
  return retrievalSettingsSchema.parse(s);
}

/** Channel → weight, the shape `fuse()` takes. */
export function fusionWeights(s: RetrievalSettings): Record<ChannelName, number> {
  return Object.fromEntries(SEARCH_CHANNELS.map((c) => [c, s[c].weight])) as Record<ChannelName, number>;
}
