import type { ChunkFilterValues } from '../../store/lexical-store.js';

/**
 * What every chunk channel must respect: the requested namespaces only, the caller's
 * visibility, and the request's filters. These are real WHERE predicates, so a row outside
 * them is never even a candidate.
 */
export type ChunkFilter = ChunkFilterValues;

export const NO_FILTERS: Omit<ChunkFilter, 'namespaces' | 'visibleScopes'> = {
  meta: null,
  kinds: null,
  excludeKinds: null,
  scopes: null,
  since: null,
  until: null,
  asOf: null,
};

/** A channel's candidate: a chunk and the channel's own raw score (null when it has none). */
export interface ChunkCandidate {
  namespace: string;
  chunkId: number;
  /** The entity owning the chunk: lets the graph walk start before the rows are loaded. */
  nodeKey: string;
  score: number | null;
  /**
   * The chunk is an observation's own text (its node is the observation, no entity): set by
   * the query channels, so that the compiler can seed the graph without reading the chunk.
   */
  observationText?: boolean;
}

/** Rows from either backend: bigint and numeric may come back as strings. */
export function toCandidates(
  rows: { namespace: string; chunkId: unknown; nodeKey: string; score: unknown; observationText?: unknown }[],
): ChunkCandidate[] {
  return rows.map((r) => ({
    namespace: r.namespace,
    chunkId: Number(r.chunkId),
    nodeKey: r.nodeKey,
    score: r.score == null ? null : Number(r.score),
    ...(r.observationText === undefined ? {} : { observationText: r.observationText === true }),
  }));
}
