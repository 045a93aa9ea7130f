import type { Queryable } from '../../db/database.js';
import {
  type ChunkCandidate,
  type ChunkFilter,
  chunkFilterParams,
  chunkFilterSql,
  toCandidates,
} from './filters.js';

export interface ListingChannelInput {
  filter: ChunkFilter;
  limit: number;
}

/**
 * The structural listing used when there is no query text: chunks matching the filters
 * (typically `kinds`), newest first by when they happened (or were written), in document
 * order within a node. No relevance, so no raw score.
 */
export async function listingChannel(q: Queryable, input: ListingChannelInput): Promise<ChunkCandidate[]> {
  if (input.limit <= 0) return [];
  const { rows } = await q.query<{ namespace: string; chunkId: unknown; nodeKey: string; score: unknown }>(
    `/* listingChannel */
     SELECT c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", NULL::float8 AS score
     FROM chunks c
     WHERE ${chunkFilterSql('c', 2)}
     ORDER BY coalesce(c.occurred_at, c.created_at) DESC, c.namespace, c.node_key, c.ord
     LIMIT $1`,
    [input.limit, ...chunkFilterParams(input.filter)],
  );
  return toCandidates(rows);
}
