import type { Queryable } from '../../db/database.js';
import {
  type ChunkCandidate,
  type ChunkFilter,
  chunkFilterParams,
  chunkFilterSql,
  toCandidates,
} from './filters.js';

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
  const { rows } = await q.query<{
    namespace: string;
    chunkId: unknown;
    nodeKey: string;
    score: unknown;
    observationText: boolean;
  }>(
    `/* vectorChannel */
     SELECT namespace, "chunkId", "nodeKey", 1 - distance AS score, "observationText" FROM (
       SELECT c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", c.embedding <=> $1::vector AS distance,
              (c.observation_id = c.node_key) IS TRUE AS "observationText"
       FROM chunks c
       WHERE c.embedding IS NOT NULL AND ${chunkFilterSql('c', 4)}
       ORDER BY c.embedding <=> $1::vector
       LIMIT (SELECT $2::int FROM (SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
                                          set_config('hnsw.ef_search', $3::text, true)) AS hnsw_settings)
     ) nearest
     ORDER BY distance, namespace, "chunkId"`,
    [
      `[${input.embedding.join(',')}]`,
      input.limit,
      String(input.efSearch),
      ...chunkFilterParams(input.filter),
    ],
  );
  return toCandidates(rows);
}
