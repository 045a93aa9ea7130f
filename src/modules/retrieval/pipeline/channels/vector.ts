import type { Queryable } from '../../../../db/database.js';
import { nearestChunks } from '../../store/chunk-channel-store.js';
import { type ChunkCandidate, type ChunkFilter, toCandidates } from './filters.js';

export interface VectorChannelInput {
  filter: ChunkFilter;
  /** The query embedding (unit length, the embedder's dimension). */
  embedding: number[];
  /** Candidates wanted. */
  limit: number;
  efSearch: number;
}

/**
 * HNSW cosine over chunk embeddings; raw score = 1 − cosine distance.
 *
 * Filters apply on top of the index, and a plain HNSW scan stops after ef_search rows: with a
 * selective filter (one namespace of several) it would return almost nothing. pgvector's
 * iterative scan keeps walking the graph until LIMIT rows pass the filter. Both settings are
 * made transaction-local with set_config inside the LIMIT expression: the executor evaluates
 * LIMIT before it pulls the first row from the index, so the scan sees them, and nothing
 * leaks to the pooled connection's next statement. `relaxed_order` may return rows slightly
 * out of order, hence the outer ORDER BY.
 */
export async function vectorChannel(q: Queryable, input: VectorChannelInput): Promise<ChunkCandidate[]> {
  if (input.limit <= 0) return [];
  return toCandidates(await nearestChunks(q, input));
}
