import type { Queryable } from '../../../../db/database.js';
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

/**
 * The label field's weight (BM25F): a chunk whose title or heading holds a lexeme of the query
 * scores × (1 + this), numbers aside. An observation's title names its actor, so "what does Melanie…" draws
 * Melanie's own turns into the channel's list, not only the turns around them; a document's
 * title or heading is the field it names. The same rule as the `label` text signal, applied
 * where it can still bring a candidate in (see eval/results/README.md for the measurements).
 */
export const LABEL_FIELD_BOOST = 0.3;

/** BM25 over the chunk postings (see store/lexical-store.ts for the statement). */
export async function lexicalChannel(q: Queryable, input: LexicalChannelInput): Promise<ChunkCandidate[]> {
  if (input.limit <= 0 || input.query.trim() === '') return [];
  return toCandidates(await lexicalSearch(q, { ...input, labelBoost: LABEL_FIELD_BOOST }));
}
