/**
 * Okapi BM25 in SQL over `chunk_postings` (kept right by triggers on chunks) and
 * `lexical_stats` (per namespace and text-search configuration: documents and total length):
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
import type { Queryable } from '../db/database.js';
import { type SqlFragment, chunkHeld, inNamespaces, raw, run, sql, visible } from './sql.js';

/** The chunk-level filters of every retrieval channel (absent filters bind NULL). */
export interface ChunkFilterValues {
  namespaces: string[];
  /** The principal's visibility scopes; null = unrestricted. */
  visibleScopes: string[] | null;
  /** Containment: a chunk matches when its meta contains every given pair. */
  meta: Record<string, unknown> | null;
  kinds: string[] | null;
  /** A chunk matches when it carries at least one of these scopes. */
  scopes: string[] | null;
  /** Half-open window [since, until) on occurred_at, or created_at when it has none. */
  since: Date | null;
  until: Date | null;
  /** What memory held at this instant (see chunkHeld); null = now. */
  asOf: Date | null;
}

/** The chunk filter over alias `alias` as one fixed predicate, whatever the request holds. */
export function chunkFilter(alias: string, f: ChunkFilterValues): SqlFragment {
  const a = raw(alias);
  const time = sql`coalesce(${a}.occurred_at, ${a}.created_at)`;
  return sql`${inNamespaces(alias, f.namespaces)}
    AND ${visible(alias, f.visibleScopes)}
    AND (${f.meta}::jsonb IS NULL OR ${a}.meta @> ${f.meta}::jsonb)
    AND (${f.kinds}::text[] IS NULL OR ${a}.kind = ANY(${f.kinds}::text[]))
    AND (${f.scopes}::text[] IS NULL OR ${a}.scopes && ${f.scopes}::text[])
    AND (${f.since}::timestamptz IS NULL OR ${time} >= ${f.since}::timestamptz)
    AND (${f.until}::timestamptz IS NULL OR ${time} < ${f.until}::timestamptz)
    AND ${chunkHeld(alias, f.asOf)}`;
}

export interface LexicalRankingInput {
  filter: ChunkFilterValues;
  query: string;
  limit: number;
  k1: number;
  b: number;
  /** At most this many query lexemes per namespace and configuration, rarest first. */
  maxTerms: number;
  /** Score only the best `prefilter` BM25 rows before the chunk filters; null = all. */
  prefilter: number | null;
  /**
   * The label field of BM25F: a row whose title or heading holds one of these words (the
   * query's own words, letters and digits only) scores × (1 + `labelBoost`). Applied to the
   * best `LABEL_WINDOW` × `limit` rows, so the pattern is matched on a bounded set. Absent = none.
   */
  labelWords?: string[] | null;
  labelBoost?: number;
}

/** Rows, as multiples of the limit, that the label boost may re-order. */
const LABEL_WINDOW = 4;

export interface LexicalRow {
  namespace: string;
  chunkId: unknown;
  nodeKey: string;
  score: unknown;
  observationText: boolean;
  /** 1-based rank in the ranking. */
  pos: unknown;
}

/** The ranking as a subquery (namespace, chunkId, nodeKey, score, pos), best first. */
export function lexicalRanking(input: LexicalRankingInput): SqlFragment {
  const { k1, b } = input;
  const pattern = labelPattern(input);
  return sql`WITH corpus AS MATERIALIZED (
       -- One corpus per (namespace, configuration): the query is analysed in each language present.
       SELECT st.namespace, st.ts_config AS cfg,
              st.doc_count::float8 AS n_docs, st.total_len::float8 / st.doc_count AS avgdl
       FROM lexical_stats st
       WHERE ${inNamespaces('st', input.filter.namespaces)} AND st.doc_count > 0
     ), terms AS MATERIALIZED (
       SELECT DISTINCT corpus.namespace, corpus.cfg, l.lexeme, corpus.n_docs, corpus.avgdl
       FROM corpus CROSS JOIN LATERAL unnest(to_tsvector(corpus.cfg, ${input.query}::text)) AS l
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
              sum(w.idf * p.tf * (${k1}::float8 + 1)
                  / (p.tf + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * p.doc_len / w.avgdl))) AS score
       FROM weighted w
       JOIN chunk_postings p ON p.namespace = w.namespace AND p.ts_config = w.cfg AND p.lexeme = w.lexeme
       WHERE w.rarity <= ${input.maxTerms}
       GROUP BY p.namespace, p.chunk_id
       ORDER BY score DESC, p.namespace, p.chunk_id
       LIMIT ${input.prefilter}
     ), filtered AS (
       SELECT s.namespace, s.chunk_id, c.node_key, s.score, c.title, c.heading,
              (c.observation_id = c.node_key) IS TRUE AS observation_text
       FROM scored s
       JOIN chunks c ON c.namespace = s.namespace AND c.chunk_id = s.chunk_id
       WHERE ${chunkFilter('c', input.filter)}
       ORDER BY s.score DESC, s.namespace, s.chunk_id
       LIMIT ${input.limit * (pattern === null ? 1 : LABEL_WINDOW)}
     ), boosted AS (
       SELECT f.namespace, f.chunk_id, f.node_key, f.observation_text,
              CASE WHEN ${pattern}::text IS NOT NULL AND concat_ws(' ', f.title, f.heading) ~* ${pattern}::text
                   THEN f.score * (1 + ${input.labelBoost ?? 0}::float8) ELSE f.score END AS score
       FROM filtered f
     )
     SELECT b.namespace, b.chunk_id AS "chunkId", b.node_key AS "nodeKey", b.score,
            b.observation_text AS "observationText",
            row_number() OVER (ORDER BY b.score DESC, b.namespace, b.chunk_id) AS pos
     FROM boosted b
     ORDER BY b.score DESC, b.namespace, b.chunk_id
     LIMIT ${input.limit}`;
}

/** `\m(w1|w2…)\M`, case-insensitive in use; null without words or without a boost. */
function labelPattern(input: LexicalRankingInput): string | null {
  const words = (input.labelWords ?? []).filter((w) => /^[\p{L}\p{N}_]+$/u.test(w));
  if (words.length === 0 || !(input.labelBoost && input.labelBoost > 0)) return null;
  return `\\m(${words.join('|')})\\M`;
}

export async function lexicalSearch(q: Queryable, input: LexicalRankingInput): Promise<LexicalRow[]> {
  const { rows } = await run<LexicalRow>(
    q,
    sql`/* lexicalChannel */
     ${lexicalRanking(input)}`,
  );
  return rows;
}
