import type { Queryable } from '../../../../db/database.js';
import { listChunks } from '../../store/chunk-channel-store.js';
import { type ChunkCandidate, type ChunkFilter, toCandidates } from './filters.js';

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
  return toCandidates(await listChunks(q, input));
}
