import type { Queryable } from '../../src/db/database.js';
import {
  deleteChunksPosted,
  postedColumns,
  postingsOfInserted,
  updateChunksPosted,
} from '../../src/kernel/store/postings.js';
import { compileSql, raw } from '../../src/kernel/store/sql.js';

/**
 * The BM25 index recomputed from scratch from the chunks' tsvectors, title and heading, and
 * compared with the stored `chunk_postings` and `lexical_stats`. Written independently of
 * src/kernel/store/postings.ts, so a bug there cannot hide itself: a posting per (chunk,
 * lexeme) with tf = positions (1 when none), doc_len = the chunk's summed tf, label = the
 * lexeme occurs in the title or heading analysed in the chunk's configuration; statistics per
 * (namespace, configuration) count the chunks that have a lexeme. A statistics row brought
 * back to zero by deletes may stay: it counts as absent.
 */
export interface IndexDrift {
  /** Postings missing, stray or different from the recount, and how many in all. */
  postings: { count: number; first: unknown[] };
  /** Statistics rows that differ from the recount. */
  stats: unknown[];
}

const RECOUNTED_POSTINGS = `
  WITH truth AS (
    SELECT c.namespace, c.ts_config::text AS ts_config, l.lexeme, c.chunk_id,
           coalesce(array_length(l.positions, 1), 1) AS tf,
           (sum(coalesce(array_length(l.positions, 1), 1)) OVER (PARTITION BY c.namespace, c.chunk_id))::int AS doc_len,
           l.lexeme = ANY (tsvector_to_array(to_tsvector(c.ts_config, concat_ws(' ', c.title, c.heading)))) AS label
    FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS l
    WHERE $1::text[] IS NULL OR c.namespace = ANY($1::text[])
  ), stored AS (
    SELECT namespace, ts_config::text AS ts_config, lexeme, chunk_id, tf, doc_len, label FROM chunk_postings
    WHERE $1::text[] IS NULL OR namespace = ANY($1::text[])
  ), drift AS (
    SELECT coalesce(t.namespace, s.namespace) AS namespace, coalesce(t.chunk_id, s.chunk_id) AS chunk_id,
           coalesce(t.lexeme, s.lexeme) AS lexeme, to_jsonb(t) AS expected, to_jsonb(s) AS stored
    FROM truth t FULL JOIN stored s
      ON s.namespace = t.namespace AND s.ts_config = t.ts_config AND s.lexeme = t.lexeme AND s.chunk_id = t.chunk_id
    WHERE (t.tf, t.doc_len, t.label) IS DISTINCT FROM (s.tf, s.doc_len, s.label)
  )
  SELECT (SELECT count(*)::int FROM drift) AS count,
         coalesce((SELECT jsonb_agg(d) FROM (SELECT * FROM drift ORDER BY namespace, chunk_id, lexeme LIMIT 5) d), '[]') AS first`;

const RECOUNTED_STATS = `
  WITH lens AS (
    SELECT c.namespace, c.ts_config::text AS ts_config, c.chunk_id,
           sum(coalesce(array_length(l.positions, 1), 1)) AS len
    FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS l
    WHERE $1::text[] IS NULL OR c.namespace = ANY($1::text[])
    GROUP BY 1, 2, 3
  ), truth AS (
    SELECT namespace, ts_config, count(*)::bigint AS doc_count, sum(len)::bigint AS total_len
    FROM lens GROUP BY 1, 2
  ), stored AS (
    SELECT namespace, ts_config::text AS ts_config, doc_count, total_len FROM lexical_stats
    WHERE ($1::text[] IS NULL OR namespace = ANY($1::text[])) AND (doc_count <> 0 OR total_len <> 0)
  )
  SELECT coalesce(t.namespace, s.namespace) AS namespace, coalesce(t.ts_config, s.ts_config) AS ts_config,
         t.doc_count::int AS "expectedDocs", s.doc_count::int AS "storedDocs",
         t.total_len::int AS "expectedLen", s.total_len::int AS "storedLen"
  FROM truth t FULL JOIN stored s ON s.namespace = t.namespace AND s.ts_config = t.ts_config
  WHERE (t.doc_count, t.total_len) IS DISTINCT FROM (s.doc_count, s.total_len)
  ORDER BY 1, 2`;

/** How the stored index differs from a recount (of `namespaces`, or of every namespace). */
export async function indexDrift(
  q: Queryable,
  namespaces: readonly string[] | null = null,
): Promise<IndexDrift> {
  const ns = namespaces ? [...namespaces] : null;
  const postings = await q.query<{ count: number; first: unknown[] }>(RECOUNTED_POSTINGS, [ns]);
  const stats = await q.query(RECOUNTED_STATS, [ns]);
  return { postings: postings.rows[0]!, stats: stats.rows };
}

/** No drift: what `expect(await indexDrift(db)).toEqual(NO_DRIFT)` compares with. */
export const NO_DRIFT: IndexDrift = { postings: { count: 0, first: [] }, stats: [] };

/**
 * Chunk writes by hand for tests (seeds, a crash's leftovers), with their postings as the
 * gateway's own statements write them: the statement text with `$n` parameters, wrapped in the
 * kernel's postings CTEs (which bind no parameter of their own).
 */
const text = (fragment: Parameters<typeof compileSql>[0]) => {
  const compiled = compileSql(fragment);
  if (compiled.values.length > 0) throw new Error('a postings fragment bound a parameter');
  return compiled.text;
};

/** `insert`: an `INSERT INTO chunks … SELECT …` without RETURNING. Answers the chunks written. */
export async function insertChunks(
  q: Queryable,
  insert: string,
  params: unknown[] = [],
): Promise<{ chunkId: number; nodeKey: string; ord: number }[]> {
  const { rows } = await q.query<{ chunkId: string; nodeKey: string; ord: number }>(
    `WITH written AS (${insert} RETURNING ${text(postedColumns('chunks'))}, chunks.node_key, chunks.ord),
     ${text(postingsOfInserted('written'))}
     SELECT chunk_id AS "chunkId", node_key AS "nodeKey", ord FROM written`,
    params,
  );
  return rows.map((r) => ({ ...r, chunkId: Number(r.chunkId) }));
}

/** `UPDATE chunks c SET ${set} WHERE ${where}`, re-posting what changed. Answers the rows updated. */
export async function updateChunks(
  q: Queryable,
  set: string,
  where: string,
  params: unknown[] = [],
): Promise<number> {
  const statement = updateChunksPosted({ from: raw(`FROM chunks c WHERE ${where}`), set: raw(set) });
  const { rows } = await q.query<{ n: number }>(text(statement), params);
  return rows[0]!.n;
}

/** `DELETE FROM chunks c WHERE ${where}` with the chunks' postings. Answers the rows deleted. */
export async function deleteChunks(q: Queryable, where: string, params: unknown[] = []): Promise<number> {
  const { rows } = await q.query<{ n: number }>(text(deleteChunksPosted(raw(`WHERE ${where}`))), params);
  return rows[0]!.n;
}
