import type { Queryable } from '../../db/database.js';
import {
  type ChunkCandidate,
  type ChunkFilter,
  chunkFilterParams,
  chunkFilterSql,
  toCandidates,
} from './filters.js';

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
 * Okapi BM25 in SQL over `chunk_postings` (kept right by triggers on chunks) and
 * `lexical_stats` (per namespace: documents and total length):
 *
 *   score(d) = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)),
 *   idf(t)   = ln(1 + (N − df + 0.5) / (df + 0.5)),
 *
 * with df counted from the postings of the query's own lexemes. The query lexemes come from
 * `to_tsvector(<configuration>, query)`, never from tsquery parsing, so any text — quotes,
 * operators, emoji, 10 KB of it — yields lexemes or nothing, and never an error. Statistics
 * are kept per (namespace, text-search configuration): the query is analysed once in every
 * configuration its namespaces hold and each chunk is scored among chunks of its own language.
 */
export async function lexicalChannel(q: Queryable, input: LexicalChannelInput): Promise<ChunkCandidate[]> {
  if (input.limit <= 0 || input.query.trim() === '') return [];
  const { rows } = await q.query<{ namespace: string; chunkId: unknown; nodeKey: string; score: unknown }>(
    `/* lexicalChannel */
     WITH corpus AS MATERIALIZED (
       -- One corpus per (namespace, configuration): the query is analysed in each language present.
       SELECT st.namespace, st.ts_config AS cfg,
              st.doc_count::float8 AS n_docs, st.total_len::float8 / st.doc_count AS avgdl
       FROM lexical_stats st
       WHERE st.namespace = ANY($7::text[]) AND st.doc_count > 0
     ), terms AS MATERIALIZED (
       SELECT DISTINCT corpus.namespace, corpus.cfg, l.lexeme, corpus.n_docs, corpus.avgdl
       FROM corpus CROSS JOIN LATERAL unnest(to_tsvector(corpus.cfg, $1::text)) AS l
     ), weighted AS MATERIALIZED (
       -- df once per term: an index-only range count on (namespace, configuration, lexeme).
       SELECT t.namespace, t.cfg, t.lexeme, t.avgdl, ln(1 + (t.n_docs - d.df + 0.5) / (d.df + 0.5)) AS idf,
              row_number() OVER (PARTITION BY t.namespace, t.cfg ORDER BY d.df, t.lexeme) AS rarity
       FROM terms t
       CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM chunk_postings p
                           WHERE p.namespace = t.namespace AND p.ts_config = t.cfg AND p.lexeme = t.lexeme) d
       WHERE d.df > 0
     ), scored AS (
       SELECT p.namespace, p.chunk_id,
              sum(w.idf * p.tf * ($3::float8 + 1)
                  / (p.tf + $3::float8 * (1 - $4::float8 + $4::float8 * p.doc_len / w.avgdl))) AS score
       FROM weighted w
       JOIN chunk_postings p ON p.namespace = w.namespace AND p.ts_config = w.cfg AND p.lexeme = w.lexeme
       WHERE w.rarity <= $5
       GROUP BY p.namespace, p.chunk_id
       ORDER BY score DESC, p.namespace, p.chunk_id
       LIMIT $6
     )
     SELECT s.namespace, s.chunk_id AS "chunkId", c.node_key AS "nodeKey", s.score
     FROM scored s
     JOIN chunks c ON c.namespace = s.namespace AND c.chunk_id = s.chunk_id
     WHERE ${chunkFilterSql('c', 7)}
     ORDER BY s.score DESC, s.namespace, s.chunk_id
     LIMIT $2`,
    [
      input.query,
      input.limit,
      input.k1,
      input.b,
      input.maxTerms,
      input.prefilter,
      ...chunkFilterParams(input.filter),
    ],
  );
  return toCandidates(rows);
}
