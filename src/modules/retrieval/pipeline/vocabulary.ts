/**
 * The retrieval vocabulary, declared once: channels, search modes, context strategies, their
 * weights and the defaults of every read. GraphQL enums and inputs, zod schemas, settings and
 * presets derive from these lists; nothing else spells them out.
 */

/** Every retrieval channel: the query channels, then the channels anchored on entities. */
export const CHANNELS = ['vector', 'lexical', 'exact', 'facts', 'graph', 'recent'] as const;
export type ChannelName = (typeof CHANNELS)[number];

/** Channels that read the query text (the only ones a time window keeps). */
export const QUERY_CHANNELS = ['vector', 'lexical', 'exact'] as const satisfies readonly ChannelName[];
export type QueryChannel = (typeof QUERY_CHANNELS)[number];

/** Channels `search` runs (with graph neighbours of the hits), each with its settings block. */
export const SEARCH_CHANNELS = [
  'vector',
  'lexical',
  'exact',
  'graph',
] as const satisfies readonly ChannelName[];
export type SearchChannel = (typeof SEARCH_CHANNELS)[number];

/**
 * RRF weight of each channel. `vector` is a placeholder: the weight that fits the configured
 * embedder replaces it (settings.ts, VECTOR_WEIGHT_BY_EMBEDDER).
 */
export const DEFAULT_WEIGHTS: Readonly<Record<ChannelName, number>> = {
  vector: 1.0,
  lexical: 1.0,
  exact: 1.0,
  facts: 1.0,
  graph: 0.7,
  recent: 0.6,
};

/** Weight of the compiler's multi-hop list in RRF (a second, weaker pass). */
export const MULTI_HOP_WEIGHT = 0.5;

/** The RRF constant. */
export const DEFAULT_RRF_K = 60;

export const SEARCH_MODES = ['HYBRID', 'VECTOR', 'LEXICAL'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** Which query channels a search mode runs (the settings' `enabled` flags narrow further). */
export const MODE_CHANNELS: Readonly<Record<SearchMode, readonly QueryChannel[]>> = {
  HYBRID: ['vector', 'lexical', 'exact'],
  VECTOR: ['vector'],
  LEXICAL: ['lexical', 'exact'],
};

export const CONTEXT_STRATEGIES = ['HYBRID', 'SEMANTIC', 'EXACT', 'GRAPH', 'BRIEFING'] as const;
export type ContextStrategy = (typeof CONTEXT_STRATEGIES)[number];

/** Which channels a context strategy runs. */
export const STRATEGY_CHANNELS: Readonly<Record<ContextStrategy, readonly ChannelName[]>> = {
  // "All five": lexical (with its exact-identifier companion), vector, facts, graph, recent.
  HYBRID: ['vector', 'lexical', 'exact', 'facts', 'graph', 'recent'],
  SEMANTIC: ['vector'],
  EXACT: ['lexical', 'exact'],
  GRAPH: ['graph', 'facts'],
  BRIEFING: ['graph', 'facts', 'recent'],
};

/** Defaults of `search` and `ask` arguments. */
export const SEARCH_DEFAULTS = {
  k: 8,
  mode: 'HYBRID',
  hops: 1,
  rrfK: DEFAULT_RRF_K,
  rerank: false,
} as const satisfies { mode: SearchMode } & Record<string, unknown>;

/** `recall` budgets: how many fragments each returns. */
export const RECALL_BUDGETS = { LOW: 4, MID: 8, HIGH: 16 } as const;
export type RecallBudget = keyof typeof RECALL_BUDGETS;
export const DEFAULT_RECALL_BUDGET: RecallBudget = 'MID';

/** Defaults of `context` arguments. */
export const CONTEXT_DEFAULTS = {
  k: 8,
  budgetTokens: 8000,
  strategy: 'HYBRID',
} as const satisfies { strategy: ContextStrategy } & Record<string, unknown>;
