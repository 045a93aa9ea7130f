/**
 * Strategies of the context compiler: which retrieval channels run and with which RRF weight.
 * Data, not code paths — the compiler runs whatever a strategy lists (see ../retrieval/vocabulary.ts).
 */
import {
  CONTEXT_STRATEGIES,
  type ChannelName,
  type ContextStrategy,
  DEFAULT_WEIGHTS,
  QUERY_CHANNELS,
  STRATEGY_CHANNELS,
} from '../pipeline/vocabulary.js';

export { CONTEXT_STRATEGIES, type ContextStrategy };

export type CompilerChannel = ChannelName;

export interface StrategyPlan {
  strategy: ContextStrategy;
  channels: CompilerChannel[];
  weights: Record<CompilerChannel, number>;
  /** False for BRIEFING: standing context for an anchor or scope, the query text is not used. */
  usesQuery: boolean;
}

/** The vocabulary's weights; `vector` comes from the embedder's preset (see planFor). */
export const BASE_WEIGHTS: Readonly<Omit<Record<CompilerChannel, number>, 'vector'>> = {
  lexical: DEFAULT_WEIGHTS.lexical,
  exact: DEFAULT_WEIGHTS.exact,
  facts: DEFAULT_WEIGHTS.facts,
  graph: DEFAULT_WEIGHTS.graph,
  recent: DEFAULT_WEIGHTS.recent,
};

const QUERY = new Set<CompilerChannel>(QUERY_CHANNELS);

/**
 * The recent channel's weight when the request has a query: recency breaks ties among relevant
 * items instead of competing with relevance — the rule freshness follows (fusion.ts,
 * freshnessMaxWithQuery): its first rank, 0.002 / 61 ≈ 0.00003, stays below one rank step of
 * a query channel, so recent items fill what room the matches leave. At the full weight the
 * newest turns, barely matched, outranked the best match of every question (LoCoMo dev, pack
 * MRR 0.19 against search's 0.47); at 0.1 they still displaced matches (pack MRR 0.511
 * against search's 0.529, lower on both halves of the split).
 */
export const RECENT_WEIGHT_WITH_QUERY = 0.002;

/**
 * The channels and weights of `strategy`. `vectorWeight` is the weight that fits the configured
 * embedder (the search module's presets); an empty query drops the query-driven channels
 * (vector, lexical, exact) since they have nothing to match.
 */
export function planFor(strategy: ContextStrategy, vectorWeight: number, query: string): StrategyPlan {
  const usesQuery = strategy !== 'BRIEFING';
  const hasQuery = usesQuery && query.trim().length > 0;
  const channels = STRATEGY_CHANNELS[strategy].filter((c) => hasQuery || !QUERY.has(c));
  return {
    strategy,
    channels: [...channels],
    weights: {
      ...BASE_WEIGHTS,
      vector: vectorWeight,
      recent: hasQuery ? Math.min(BASE_WEIGHTS.recent, RECENT_WEIGHT_WITH_QUERY) : BASE_WEIGHTS.recent,
    },
    usesQuery,
  };
}
