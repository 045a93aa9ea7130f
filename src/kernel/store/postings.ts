/**
 * The lexical channel's BM25 index, `chunk_postings` (one row per chunk and lexeme: tf, the
 * chunk's length, the label flag) and `lexical_stats` (per namespace and text-search
 * configuration: chunks and their total length), written by the very statements that write
 * chunks, as data-modifying CTEs: every statement that inserts, deletes or re-indexes chunks
 * composes one of the builders below, so a chunk and its postings change together and no
 * trigger runs per statement (migration 028 dropped the statement triggers that did this).
 *
 * What a posting is (as the triggers of 010, 016, 017 and 022 defined it): tf is the number of
 * positions of the lexeme in the chunk's tsvector (1 when it has none); doc_len is the sum of
 * the chunk's tf; `label` says the lexeme also occurs in the chunk's title or heading, analysed
 * in the chunk's own configuration. A chunk without lexemes has no postings and is not counted.
 * Postings are written and deleted in the order of their primary key (namespace,
 * configuration, lexeme, chunk): a batch's tens of thousands of rows then walk the index from
 * one leaf to the next instead of jumping to a random leaf per row.
 *
 * Statistics change by one upsert of net deltas per statement: a second CTE updating the same
 * `lexical_stats` row in the same statement is an error.
 */
import { empty, ident, raw, type SqlFragment, sql } from './sql.js';

/**
 * What a chunk-writing CTE returns for its postings: `RETURNING ${postedColumns('c')}` (the
 * target's alias, or `chunks`).
 */
export function postedColumns(alias: string): SqlFragment {
  const a = ident(alias);
  return sql`${a}.namespace, ${a}.ts_config, ${a}.chunk_id, ${a}.tsv, ${a}.title, ${a}.heading`;
}

/** The lexemes of a tsvector column as rows `l`, and a lexeme's tf (its positions, 1 when none). */
const LEXEMES = (tsv: string) => raw(`unnest(${tsv}) AS l`);
const TF = raw('coalesce(array_length(l.positions, 1), 1)');
/**
 * A chunk's length (its summed tf), NULL for a chunk without lexemes, read off its tsvector
 * once per chunk: no per-posting aggregate to join back.
 */
const docLen = (tsv: string) => sql`(SELECT sum(${TF})::integer FROM ${LEXEMES(tsv)})`;
/** The same as a LATERAL subquery `(doc_len)`, evaluated once per row wherever it is read. */
const docLenOf = (tsv: string) => sql`(SELECT sum(${TF})::integer AS doc_len FROM ${LEXEMES(tsv)})`;
/** The lexemes of a chunk's title and heading in configuration `cfg`: once per chunk, not per posting. */
const labelWords = (cfg: string, title: string, heading: string) =>
  raw(`tsvector_to_array(to_tsvector(${cfg}, concat_ws(' ', ${title}, ${heading})))`);
const KEY_ORDER = raw('namespace, ts_config, lexeme, chunk_id');

/**
 * The statistics upsert: `deltas` is a query of (namespace, ts_config, docs, len) rows, summed
 * per configuration into one row each (an upsert may touch a row once per statement); a
 * configuration whose deltas cancel out is left alone.
 */
function statsUpsert(deltas: SqlFragment): SqlFragment {
  return sql`INSERT INTO lexical_stats AS s (namespace, ts_config, doc_count, total_len)
       SELECT d.namespace, d.ts_config, sum(d.docs), sum(d.len) FROM (${deltas}) d
       GROUP BY d.namespace, d.ts_config
       HAVING sum(d.docs) <> 0 OR sum(d.len) <> 0
       ON CONFLICT (namespace, ts_config) DO UPDATE
         SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len`;
}

/** Deletes the postings keyed by the rows of `keys` (namespace, ts_config, lexeme, chunk_id). */
function deletePostings(keys: SqlFragment): SqlFragment {
  return sql`DELETE FROM chunk_postings p
       USING (SELECT namespace, ts_config, lexeme, chunk_id FROM ${keys} ORDER BY ${KEY_ORDER}) x
       WHERE p.namespace = x.namespace AND p.ts_config = x.ts_config AND p.lexeme = x.lexeme
         AND p.chunk_id = x.chunk_id`;
}

/** Inserts the postings of `rows` (the posting columns, doc_len included), in key order. */
function insertPostings(rows: SqlFragment): SqlFragment {
  return sql`INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len, label)
       SELECT namespace, ts_config, lexeme, chunk_id, tf, doc_len, label FROM ${rows}
       ORDER BY ${KEY_ORDER}`;
}

/**
 * CTEs (to follow `written AS (INSERT INTO chunks … RETURNING ${postedColumns(…)})` in the same
 * WITH) that post the chunks CTE `written` inserted and count them in the statistics.
 */
export function postingsOfInserted(written: string): SqlFragment {
  const w = ident(written);
  const n = (suffix: string) => ident(`${written}_${suffix}`);
  return sql`${n('docs')} AS MATERIALIZED (
       SELECT w.namespace, w.ts_config, w.chunk_id, w.tsv, ${docLen('w.tsv')} AS doc_len,
              ${labelWords('w.ts_config', 'w.title', 'w.heading')} AS label_words
       FROM ${w} w
     ), ${n('posted')} AS (
       ${insertPostings(sql`(SELECT d.namespace, d.ts_config, l.lexeme, d.chunk_id, ${TF} AS tf, d.doc_len,
                                   l.lexeme = ANY (d.label_words) AS label
                            FROM ${n('docs')} d, ${LEXEMES('d.tsv')}) x`)}
     ), ${n('counted')} AS (
       ${statsUpsert(sql`SELECT namespace, ts_config, 1 AS docs, doc_len AS len FROM ${n('docs')}
                         WHERE doc_len IS NOT NULL`)}
     )`;
}

/**
 * CTEs (to follow `gone AS (DELETE FROM chunks … RETURNING ${postedColumns(…)})`) that delete
 * the postings of the chunks CTE `gone` deleted and take them out of the statistics.
 */
export function postingsOfDeleted(gone: string): SqlFragment {
  const g = ident(gone);
  const n = (suffix: string) => ident(`${gone}_${suffix}`);
  return sql`${n('unposted')} AS (
       ${deletePostings(sql`(SELECT g.namespace, g.ts_config, l.lexeme, g.chunk_id FROM ${g} g, ${LEXEMES('g.tsv')}) x`)}
     ), ${n('counted')} AS (
       ${statsUpsert(sql`SELECT g.namespace, g.ts_config, -1 AS docs, -d.doc_len AS len
                         FROM ${g} g CROSS JOIN LATERAL ${docLenOf('g.tsv')} d WHERE d.doc_len IS NOT NULL`)}
     )`;
}

/**
 * What an UPDATE of chunks aliased `c` over the locked old rows aliased `o` returns: the new
 * row's posted columns and the old one's (PostgreSQL 15 has no OLD in RETURNING).
 */
export function postedChanges(c: string, o: string): SqlFragment {
  const old = ident(o);
  return sql`${postedColumns(c)}, ${old}.ts_config AS old_ts_config, ${old}.tsv AS old_tsv,
       ${old}.title AS old_title, ${old}.heading AS old_heading`;
}

/**
 * CTEs (to follow `updated AS (UPDATE chunks c … RETURNING ${postedChanges('c', 'o')})`) that
 * re-post only the chunks whose configuration, tsvector or label text changed (re-embedding
 * rewrites no posting), as a diff per chunk: postings of lexemes gone are deleted, new ones
 * inserted, those whose tf, label or doc_len changed updated, identical ones left alone. A
 * chunk that changed configuration leaves its old one's statistics and joins its new one's.
 */
export function postingsOfUpdated(updated: string): SqlFragment {
  const u = ident(updated);
  const n = (suffix: string) => ident(`${updated}_${suffix}`);
  return sql`${n('changed')} AS MATERIALIZED (
       SELECT u.namespace, u.chunk_id, u.old_ts_config, u.old_tsv, u.ts_config, u.tsv,
              ${docLen('u.old_tsv')} AS old_doc_len, ${docLen('u.tsv')} AS doc_len,
              ${labelWords('u.old_ts_config', 'u.old_title', 'u.old_heading')} AS old_label_words,
              ${labelWords('u.ts_config', 'u.title', 'u.heading')} AS label_words
       FROM ${u} u
       WHERE u.ts_config <> u.old_ts_config OR u.tsv <> u.old_tsv
          OR concat_ws(' ', u.title, u.heading) <> concat_ws(' ', u.old_title, u.old_heading)
     ), ${n('diff')} AS MATERIALIZED (
       SELECT coalesce(i.namespace, w.namespace) AS namespace, coalesce(i.ts_config, w.ts_config) AS ts_config,
              coalesce(i.lexeme, w.lexeme) AS lexeme, coalesce(i.chunk_id, w.chunk_id) AS chunk_id,
              i.tf, i.doc_len, i.label, w.chunk_id IS NULL AS added, i.chunk_id IS NULL AS removed
       FROM ${postingsSide(n('changed'), 'old_')} w
       FULL JOIN ${postingsSide(n('changed'), '')} i
         ON i.namespace = w.namespace AND i.chunk_id = w.chunk_id AND i.ts_config = w.ts_config
        AND i.lexeme = w.lexeme
       WHERE w.chunk_id IS NULL OR i.chunk_id IS NULL
          OR i.tf <> w.tf OR i.doc_len <> w.doc_len OR i.label <> w.label
     ), ${n('unposted')} AS (
       ${deletePostings(sql`${n('diff')} WHERE removed`)}
     ), ${n('posted')} AS (
       ${insertPostings(sql`${n('diff')} WHERE added`)}
     ), ${n('reposted')} AS (
       UPDATE chunk_postings p SET tf = x.tf, doc_len = x.doc_len, label = x.label
       FROM (SELECT * FROM ${n('diff')} WHERE NOT added AND NOT removed ORDER BY ${KEY_ORDER}) x
       WHERE p.namespace = x.namespace AND p.ts_config = x.ts_config AND p.lexeme = x.lexeme
         AND p.chunk_id = x.chunk_id
     ), ${n('counted')} AS (
       ${statsUpsert(sql`SELECT namespace, ts_config, -1 AS docs, -doc_len AS len FROM (
                           SELECT namespace, old_ts_config AS ts_config, old_doc_len AS doc_len FROM ${n('changed')}
                         ) was WHERE doc_len IS NOT NULL
                         UNION ALL SELECT namespace, ts_config, 1, doc_len FROM ${n('changed')}
                         WHERE doc_len IS NOT NULL`)}
     )`;
}

/**
 * The postings the changed chunks had (prefix `old_`: their old configuration, tsvector and
 * label text) or should have (no prefix), as a subquery: computed, not read, since postings
 * are a function of those columns.
 */
function postingsSide(changed: SqlFragment, prefix: 'old_' | ''): SqlFragment {
  const col = (name: string) => raw(`c.${prefix}${name}`);
  return sql`(SELECT c.namespace, ${col('ts_config')} AS ts_config, c.chunk_id, l.lexeme, ${TF} AS tf,
                ${col('doc_len')} AS doc_len, l.lexeme = ANY (${col('label_words')}) AS label
         FROM ${changed} c, ${LEXEMES(`c.${prefix}tsv`)})`;
}

/**
 * A whole statement deleting chunks aliased `c` (`where` may start with `USING …`) with their
 * postings; it answers `n`, the chunks deleted.
 */
export function deleteChunksPosted(where: SqlFragment): SqlFragment {
  return sql`WITH gone AS (
       DELETE FROM chunks c ${where}
       RETURNING ${postedColumns('c')}
     ), ${postingsOfDeleted('gone')}
     SELECT count(*)::int AS n FROM gone`;
}

export interface ChunkUpdate {
  /** CTEs the rest reads, without the WITH. */
  with?: SqlFragment;
  /** The new values, as columns of the locked rows (`… AS new_search_text`), when SET needs them. */
  changes?: SqlFragment;
  /** `FROM …` holding `chunks c`, and its `WHERE`: the rows to change (those that differ). */
  from: SqlFragment;
  /** The SET list, reading the new values from the locked rows `o`. */
  set: SqlFragment;
}

/**
 * A whole statement updating chunks with their postings: the rows to change are read and locked
 * first (a MATERIALIZED CTE with FOR UPDATE, in key order, so their old values are the ones
 * the UPDATE replaces), then updated from it. It answers `n`, the chunks updated.
 */
export function updateChunksPosted(u: ChunkUpdate): SqlFragment {
  return sql`WITH ${u.with ? sql`${u.with},` : empty} locked AS MATERIALIZED (
       SELECT c.namespace, c.chunk_id, c.ts_config, c.tsv, c.title, c.heading${u.changes ? sql`, ${u.changes}` : empty}
       ${u.from}
       ORDER BY c.namespace, c.chunk_id
       FOR UPDATE OF c
     ), updated AS (
       UPDATE chunks c SET ${u.set}
       FROM locked o
       WHERE c.namespace = o.namespace AND c.chunk_id = o.chunk_id
       RETURNING ${postedChanges('c', 'o')}
     ), ${postingsOfUpdated('updated')}
     SELECT count(*)::int AS n FROM updated`;
}
