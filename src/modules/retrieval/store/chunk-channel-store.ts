/**
 * The chunk channels' statements other than BM25 (lexical-store.ts): nearest neighbours by
 * embedding, identifier matches, and the structural listing. Every one filters with the same
 * chunk predicate (namespace, visibility, meta, kinds, scopes, time window) before ranking.
 */
import type { Queryable } from '../../../db/database.js';
import { type ChunkFilterValues, chunkFilter } from './lexical-store.js';
import { raw, run, sql } from '../../../kernel/store/sql.js';

export interface ChunkChannelRow {
  namespace: string;
  chunkId: unknown;
  nodeKey: string;
  score: unknown;
  /** The chunk is an observation's own text (its node is the observation). */
  observationText?: boolean;
}

/**
 * HNSW nearest neighbours. The HNSW settings are made transaction-local with set_config inside
 * the LIMIT expression: the executor evaluates LIMIT before it pulls the first row from the
 * index, so the scan sees them, and nothing leaks to the pooled connection's next statement.
 * `relaxed_order` may return rows slightly out of order, hence the outer ORDER BY.
 */
export async function nearestChunks(
  q: Queryable,
  input: { filter: ChunkFilterValues; embedding: number[]; limit: number; efSearch: number },
): Promise<ChunkChannelRow[]> {
  const vector = `[${input.embedding.join(',')}]`;
  const { rows } = await run<ChunkChannelRow>(
    q,
    sql`/* vectorChannel */
     SELECT namespace, "chunkId", "nodeKey", 1 - distance AS score, "observationText" FROM (
       SELECT c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", c.embedding <=> ${vector}::vector AS distance,
              (c.observation_id = c.node_key) IS TRUE AS "observationText"
       FROM chunks c
       WHERE c.embedding IS NOT NULL AND ${chunkFilter('c', input.filter)}
       ORDER BY c.embedding <=> ${vector}::vector
       LIMIT (SELECT ${input.limit}::int FROM (SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
                                          set_config('hnsw.ef_search', ${String(input.efSearch)}::text, true)) AS hnsw_settings)
     ) nearest
     ORDER BY distance, namespace, "chunkId"`,
  );
  return rows;
}

export interface IdentifierMatchRow extends ChunkChannelRow {
  exactMatches: unknown;
}

/**
 * Chunks containing the identifiers literally (ILIKE through the trigram index; LIKE
 * metacharacters escaped), or with `fuzzy` also a close trigram match (`<%`). Raw score =
 * literal matches + best word similarity.
 */
export async function identifierMatches(
  q: Queryable,
  input: { filter: ChunkFilterValues; tokens: string[]; limit: number; fuzzy: boolean },
): Promise<IdentifierMatchRow[]> {
  const match = raw(
    input.fuzzy ? '(c.text ILIKE tk.pattern OR tk.token <% c.text)' : 'c.text ILIKE tk.pattern',
  );
  const { rows } = await run<IdentifierMatchRow>(
    q,
    sql`/* exactChannel */
     WITH tokens AS (
       SELECT DISTINCT lower(t) AS token,
              '%' || replace(replace(replace(lower(t), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' AS pattern
       FROM unnest(${input.tokens}::text[]) AS t
     ), matches AS (
       SELECT m.namespace, m.chunk_id, m.node_key, m.own, m.contained, m.similarity
       FROM tokens tk CROSS JOIN LATERAL (
         SELECT c.namespace, c.chunk_id, c.node_key, (c.observation_id = c.node_key) IS TRUE AS own,
                strpos(lower(c.text), tk.token) > 0 AS contained,
                word_similarity(tk.token, c.text) AS similarity
         FROM chunks c
         WHERE ${match} AND ${chunkFilter('c', input.filter)}
         ORDER BY contained DESC, similarity DESC, c.namespace, c.chunk_id
         LIMIT ${input.limit}
       ) m
     )
     SELECT namespace, chunk_id AS "chunkId", node_key AS "nodeKey",
            count(*) FILTER (WHERE contained) + max(similarity) AS score,
            count(*) FILTER (WHERE contained) AS "exactMatches", bool_or(own) AS "observationText"
     FROM matches
     GROUP BY namespace, chunk_id, node_key
     ORDER BY score DESC, namespace, chunk_id
     LIMIT ${input.limit}`,
  );
  return rows;
}

/** Chunks matching the filters, newest first by when they happened, in document order within a node. */
export async function listChunks(
  q: Queryable,
  input: { filter: ChunkFilterValues; limit: number },
): Promise<ChunkChannelRow[]> {
  const { rows } = await run<ChunkChannelRow>(
    q,
    sql`/* listingChannel */
     SELECT c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", NULL::float8 AS score
     FROM chunks c
     WHERE ${chunkFilter('c', input.filter)}
     ORDER BY coalesce(c.occurred_at, c.created_at) DESC, c.namespace, c.node_key, c.ord
     LIMIT ${input.limit}`,
  );
  return rows;
}
