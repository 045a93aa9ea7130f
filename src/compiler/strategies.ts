/**
 * Strategies of the context compiler: which retrieval channels run and with which RRF weight.
 * Data, not code paths — `compile.ts` runs whatever a strategy lists.
 */

export const CONTEXT_STRATEGIES = ['HYBRID', 'SEMANTIC', 'EXACT', 'GRAPH', 'BRIEFING'] as const;
export type ContextStrategy = (typeof CONTEXT_STRATEGIES)[number];

/** Channels the compiler knows: the search module's four plus `facts` and `recent`. */
export const COMPILER_CHANNELS = ['vector', 'lexical', 'exact', 'facts', 'graph', 'recent'] as const;
export type CompilerChannel = (typeof COMPILER_CHANNELS)[number];

export interface StrategyPlan {
  strategy: ContextStrategy;
  channels: CompilerChannel[];
  weights: Record<CompilerChannel, number>;
  /** False for BRIEFING: standing context for an anchor or scope, the query text is not used. */
  usesQuery: boolean;
}

/** Fixed weights from the issue; `vector` comes from the embedder's preset (see planFor). */
export const BASE_WEIGHTS: Readonly<Omit<Record<CompilerChannel, number>, 'vector'>> = {
  lexical: 1.0,
  exact: 1.0,
  facts: 1.0,
  graph: 0.7,
  recent: 0.6,
};

const CHANNELS_OF: Readonly<Record<ContextStrategy, readonly CompilerChannel[]>> = {
  // "All five": lexical (with its exact-identifier companion), vector, facts, graph, recent.
  HYBRID: ['vector', 'lexical', 'exact', 'facts', 'graph', 'recent'],
  SEMANTIC: ['vector'],
  EXACT: ['lexical', 'exact'],
  GRAPH: ['graph', 'facts'],
  BRIEFING: ['graph', 'facts', 'recent'],
};

/**
 * The channels and weights of `strategy`. `vectorWeight` is the weight that fits the configured
 * embedder (the search module's presets); an empty query drops the query-driven channels
 * (vector, lexical, exact) since they have nothing to match.
 */
export function planFor(strategy: ContextStrategy, vectorWeight: number, query: string): StrategyPlan {
  const usesQuery = strategy !== 'BRIEFING';
  const hasQuery = usesQuery && query.trim().length > 0;
  const channels = CHANNELS_OF[strategy].filter(
    (c) => hasQuery || (c !== 'vector' && c !== 'lexical' && c !== 'exact'),
  );
  return {
    strategy,
    channels: [...channels],
    weights: { ...BASE_WEIGHTS, vector: vectorWeight },
    usesQuery,
  };
}
