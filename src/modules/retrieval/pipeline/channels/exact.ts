import type { Queryable } from '../../../../db/database.js';
import { identifierMatches } from '../../store/chunk-channel-store.js';
import type { ChunkCandidate, ChunkFilter } from './filters.js';

export interface ExactChannelInput {
  filter: ChunkFilter;
  /** Identifier-like tokens of the query (see identifiers.ts), at least 3 characters each. */
  tokens: string[];
  limit: number;
  /**
   * Also take near matches (pg_trgm word similarity ≥ 0.6, e.g. a mistyped SHA). Off by default:
   * at 100k chunks the similarity scan and its recheck cost tens of milliseconds, literal
   * containment through the same index about one.
   */
  fuzzy?: boolean;
}

export interface ExactCandidate extends ChunkCandidate {
  /** How many of the tokens the chunk's text contains literally (case-insensitive). */
  exactMatches: number;
}

/**
 * Identifier lookup through the trigram index on chunk text: a chunk is a candidate when it
 * contains a token (ILIKE with the token's LIKE metacharacters escaped) or, with `fuzzy`, is
 * a close trigram match for it (`<%`, word similarity ≥ pg_trgm.word_similarity_threshold,
 * 0.6 by default). Raw score = literal matches + best word similarity, so containing two of
 * the identifiers beats containing one.
 */
export async function exactChannel(q: Queryable, input: ExactChannelInput): Promise<ExactCandidate[]> {
  const tokens = input.tokens.filter((t) => t.length >= 3);
  if (input.limit <= 0 || tokens.length === 0) return [];
  const rows = await identifierMatches(q, {
    filter: input.filter,
    tokens,
    limit: input.limit,
    fuzzy: input.fuzzy ?? false,
  });
  return rows.map((r) => ({
    namespace: r.namespace,
    chunkId: Number(r.chunkId),
    nodeKey: r.nodeKey,
    score: Number(r.score),
    exactMatches: Number(r.exactMatches),
    observationText: r.observationText === true,
  }));
}
