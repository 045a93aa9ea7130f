import type { Queryable } from '../../../db/database.js';
import { updateChunksPosted } from '../../../kernel/store/postings.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';

/** Every text-search configuration the database can use by its bare name (pg_ts_config). */
export async function listTextSearchConfigs(q: Queryable): Promise<string[]> {
  const { rows } = await run<{ name: string }>(
    q,
    sql`/* listTextSearchConfigs */
     SELECT cfgname AS name FROM pg_ts_config WHERE pg_ts_config_is_visible(oid) ORDER BY cfgname`,
  );
  return rows.map((r) => r.name);
}

/** The namespace's own setting (`auto` or a configuration); null when it follows the server default. */
export async function findNamespaceTextSearch(q: Queryable, namespace: string): Promise<string | null> {
  const { rows } = await run<{ textSearch: string | null }>(
    q,
    sql`/* findNamespaceTextSearch */
     SELECT text_search AS "textSearch" FROM namespace_settings WHERE namespace = ${namespace}`,
  );
  return rows[0]?.textSearch ?? null;
}

export async function saveNamespaceTextSearch(
  q: Queryable,
  namespace: string,
  textSearch: string,
): Promise<void> {
  await run(
    q,
    sql`/* saveNamespaceTextSearch */
     INSERT INTO namespace_settings AS s (namespace, text_search) VALUES (${namespace}, ${textSearch})
     ON CONFLICT (namespace) DO UPDATE SET text_search = excluded.text_search, updated_at = now()`,
  );
}

/** How many chunks of each configuration a namespace holds. */
export async function countChunksByConfig(q: Queryable, namespace: string): Promise<Map<string, number>> {
  const { rows } = await run<{ config: string; chunks: string }>(
    q,
    sql`/* countChunksByConfig */
     SELECT ts_config::text AS config, count(*) AS chunks FROM chunks WHERE namespace = ${namespace}
     GROUP BY ts_config ORDER BY 1`,
  );
  return new Map(rows.map((r) => [r.config, Number(r.chunks)]));
}

export type ReindexState = 'RUNNING' | 'DONE' | 'FAILED';

export interface TextSearchReindexRow {
  textSearch: string;
  state: ReindexState;
  total: number;
  done: number;
  startedAt: Date;
  finishedAt: Date | null;
  error: string | null;
}

const REINDEX_COLUMNS = `text_search AS "textSearch", state, total::float8 AS total, done::float8 AS done,
  started_at AS "startedAt", finished_at AS "finishedAt", error`;

/** Starts (or restarts) the re-derivation record of a namespace: nothing done of `total`. */
export async function startTextSearchReindex(
  q: Queryable,
  namespace: string,
  textSearch: string,
): Promise<TextSearchReindexRow> {
  const nsParam = param(namespace);
  const { rows } = await run<TextSearchReindexRow>(
    q,
    sql`/* startTextSearchReindex */
     INSERT INTO text_search_reindex AS r (namespace, text_search, total)
     VALUES (${nsParam}, ${textSearch}, (SELECT count(*) FROM chunks WHERE namespace = ${nsParam}))
     ON CONFLICT (namespace) DO UPDATE
       SET text_search = excluded.text_search, state = 'RUNNING', total = excluded.total, done = 0,
           started_at = now(), finished_at = NULL, error = NULL
     RETURNING ${raw(REINDEX_COLUMNS)}`,
  );
  return rows[0]!;
}

export async function recordReindexProgress(
  q: Queryable,
  namespace: string,
  done: number,
  state: ReindexState,
  error: string | null = null,
): Promise<TextSearchReindexRow | null> {
  const stateParam = param(state);
  const { rows } = await run<TextSearchReindexRow>(
    q,
    sql`/* recordReindexProgress */
     UPDATE text_search_reindex
     SET done = ${done}, state = ${stateParam}, error = ${error}, finished_at = CASE WHEN ${stateParam} = 'RUNNING' THEN NULL ELSE now() END
     WHERE namespace = ${namespace}
     RETURNING ${raw(REINDEX_COLUMNS)}`,
  );
  return rows[0] ?? null;
}

export async function findTextSearchReindex(
  q: Queryable,
  namespace: string,
): Promise<TextSearchReindexRow | null> {
  const { rows } = await run<TextSearchReindexRow>(
    q,
    sql`/* findTextSearchReindex */ SELECT ${raw(REINDEX_COLUMNS)} FROM text_search_reindex WHERE namespace = ${namespace}`,
  );
  return rows[0] ?? null;
}

/** Re-derivations recorded as RUNNING, in every namespace. */
export async function runningTextSearchReindexes(
  q: Queryable,
): Promise<(TextSearchReindexRow & { namespace: string })[]> {
  const { rows } = await q.query<TextSearchReindexRow & { namespace: string }>(
    `/* runningTextSearchReindexes */ SELECT namespace, ${REINDEX_COLUMNS} FROM text_search_reindex
     WHERE state = 'RUNNING' ORDER BY namespace`,
  );
  return rows;
}

export interface ChunkTextRow {
  chunkId: number;
  /** Heading and text: what a chunk's language is detected from (never the title). */
  languageText: string;
}

/** The next batch of a namespace's chunks after `afterChunkId`, in chunk order. */
export async function chunkTextsAfter(
  q: Queryable,
  namespace: string,
  afterChunkId: number,
  limit: number,
): Promise<ChunkTextRow[]> {
  const { rows } = await run<{ chunkId: string; languageText: string }>(
    q,
    sql`/* chunkTextsAfter */
     SELECT chunk_id::text AS "chunkId", concat_ws(E'\n', heading, text) AS "languageText" FROM chunks
     WHERE namespace = ${namespace} AND chunk_id > ${afterChunkId} ORDER BY chunk_id LIMIT ${limit}`,
  );
  return rows.map((r) => ({ chunkId: Number(r.chunkId), languageText: r.languageText }));
}

/**
 * Sets the configuration of the given chunks in one statement; the generated tsvector follows,
 * and so do the postings, the statement moving each changed chunk between configurations'
 * statistics. Rows already in their configuration are not touched.
 */
export async function setChunkConfigs(
  q: Queryable,
  namespace: string,
  chunkIds: readonly number[],
  configs: readonly string[],
): Promise<number> {
  if (chunkIds.length === 0) return 0;
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* setChunkConfigs */ ${updateChunksPosted({
      changes: sql`v.cfg::regconfig AS new_ts_config`,
      from: sql`FROM unnest(${chunkIds}::bigint[], ${configs}::text[]) AS v(chunk_id, cfg)
       JOIN chunks c ON c.namespace = ${namespace} AND c.chunk_id = v.chunk_id
       WHERE c.ts_config <> v.cfg::regconfig`,
      set: sql`ts_config = o.new_ts_config`,
    })}`,
  );
  return rows[0]?.n ?? 0;
}
