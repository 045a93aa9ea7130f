import type { Queryable } from '../../db/database.js';
import { type ChunkCandidate, type ChunkFilter, chunkFilterParams, chunkFilterSql } from './filters.js';

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
  const { rows } = await q.query<{
    namespace: string;
    chunkId: unknown;
    nodeKey: string;
    score: unknown;
    exactMatches: unknown;
    observationText: boolean;
  }>(
    `/* exactChannel */
     WITH tokens AS (
       SELECT DISTINCT lower(t) AS token,
              '%' || replace(replace(replace(lower(t), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' AS pattern
       FROM unnest($1::text[]) AS t
     ), matches AS (
       SELECT m.namespace, m.chunk_id, m.node_key, m.own, m.contained, m.similarity
       FROM tokens tk CROSS JOIN LATERAL (
         SELECT c.namespace, c.chunk_id, c.node_key, (c.observation_id = c.node_key) IS TRUE AS own,
                strpos(lower(c.text), tk.token) > 0 AS contained,
                word_similarity(tk.token, c.text) AS similarity
         FROM chunks c
         WHERE ${input.fuzzy ? '(c.text ILIKE tk.pattern OR tk.token <% c.text)' : 'c.text ILIKE tk.pattern'}
           AND ${chunkFilterSql('c', 3)}
         ORDER BY contained DESC, similarity DESC, c.namespace, c.chunk_id
         LIMIT $2
       ) m
     )
     SELECT namespace, chunk_id AS "chunkId", node_key AS "nodeKey",
            count(*) FILTER (WHERE contained) + max(similarity) AS score,
            count(*) FILTER (WHERE contained) AS "exactMatches", bool_or(own) AS "observationText"
     FROM matches
     GROUP BY namespace, chunk_id, node_key
     ORDER BY score DESC, namespace, chunk_id
     LIMIT $2`,
    [tokens, input.limit, ...chunkFilterParams(input.filter)],
  );
  return rows.map((r) => ({
    namespace: r.namespace,
    chunkId: Number(r.chunkId),
    nodeKey: r.nodeKey,
    score: Number(r.score),
    exactMatches: Number(r.exactMatches),
    observationText: r.observationText === true,
  }));
}
