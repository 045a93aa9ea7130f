import type { Queryable } from '../../db/database.js';
import { lexicalSearch } from '../../store/lexical-store.js';
import { type ChunkCandidate, type ChunkFilter, toCandidates } from './filters.js';

export interface LexicalChannelInput {
  filter: ChunkFilter;
  query: string;
  limit: number;
  k1: number;
  b: number;
  /** At most this many query lexemes per namespace, rarest first. */
  maxTerms: number;
  /**
   * Score only the best `prefilter` BM25 rows before the chunk-level filters run. Safe when no
   * filter is selective (the common case); null scores every matching posting.
   */
  prefilter: number | null;
}

/** BM25 over the chunk postings (see store/lexical-store.ts for the statement). */
export async function lexicalChannel(q: Queryable, input: LexicalChannelInput): Promise<ChunkCandidate[]> {
  if (input.limit <= 0 || input.query.trim() === '') return [];
  return toCandidates(await lexicalSearch(q, input));
}
