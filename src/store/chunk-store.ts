import type { Queryable } from '../db/database.js';
import { visibleTo } from './visibility.js';

export interface ChunkRow {
  namespace: string;
  chunkId: number;
  nodeKey: string;
  order: number;
  kind: string;
  title: string | null;
  heading: string | null;
  text: string;
  sourcePath: string | null;
  meta: Record<string, unknown>;
  scopes: string[];
  visibility: string[];
  observationId: string | null;
  occurredAt: Date | null;
  pii: boolean;
  piiCategories: string[];
  createdAt: Date;
}

/** Never the embedding: packing and rendering do not need it, and it is the widest column. */
export const CHUNK_COLUMNS = `
  c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", c.ord AS "order", c.kind,
  c.title, c.heading, c.text, c.source_path AS "sourcePath", c.meta, c.scopes, c.visibility,
  c.observation_id AS "observationId", c.occurred_at AS "occurredAt", c.pii,
  c.pii_categories AS "piiCategories", c.created_at AS "createdAt"`;

/** Rows in the order of `chunkIds`; null where absent or invisible. */
export async function findChunksByIds(
  q: Queryable,
  namespace: string,
  chunkIds: readonly number[],
  visibleScopes: string[] | null,
): Promise<(ChunkRow | null)[]> {
  const { rows } = await q.query<ChunkRow>(
    `/* findChunksByIds */
     SELECT ${CHUNK_COLUMNS} FROM chunks c
     WHERE c.namespace = $1 AND c.chunk_id = ANY($2::bigint[]) AND ${visibleTo('c', '$3')}`,
    [namespace, chunkIds, visibleScopes],
  );
  const byId = new Map(rows.map((r) => [Number(r.chunkId), r]));
  return chunkIds.map((id) => byId.get(id) ?? null);
}

export interface ChunkWrite {
  order: number;
  kind: string;
  title: string | null;
  heading: string | null;
  text: string;
  /** What lexical search indexes (title, heading, text, possibly enriched). */
  searchText: string;
  sourcePath: string | null;
  meta: Record<string, unknown>;
  scopes: string[];
  visibility: string[];
  observationId: string | null;
  occurredAt: Date | null;
  pii: boolean;
  piiCategories: string[];
  embedding: number[] | null;
}

/**
 * Replaces every chunk of `nodeKey` with `chunks` in one multi-row statement (plus the delete):
 * rewriting a node never leaves a mix of old and new chunks. Postings follow by trigger.
 */
export async function replaceChunks(
  q: Queryable,
  namespace: string,
  nodeKey: string,
  chunks: ChunkWrite[],
  tsConfig = 'english',
): Promise<number[]> {
  await q.query(`/* deleteChunksOfNode */ DELETE FROM chunks WHERE namespace = $1 AND node_key = $2`, [
    namespace,
    nodeKey,
  ]);
  if (chunks.length === 0) return [];
  const { rows } = await q.query<{ chunkId: number }>(
    `/* insertChunks */
     INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, ts_config, source_path,
                         meta, scopes, visibility, observation_id, occurred_at, pii, pii_categories, embedding)
     SELECT $1, $2, c.ord, c.kind, c.title, c.heading, c.text, c.search_text, $3::regconfig, c.source_path,
            c.meta, c.scopes, c.visibility, c.observation_id, c.occurred_at, c.pii, c.pii_categories, c.embedding::vector
     FROM jsonb_to_recordset($4::jsonb) AS c(ord int, kind text, title text, heading text, text text, search_text text,
            source_path text, meta jsonb, scopes text[], visibility text[], observation_id text, occurred_at timestamptz,
            pii boolean, pii_categories text[], embedding text)
     ORDER BY c.ord
     RETURNING chunk_id AS "chunkId"`,
    [
      namespace,
      nodeKey,
      tsConfig,
      chunks.map((c) => ({
        ord: c.order,
        kind: c.kind,
        title: c.title,
        heading: c.heading,
        text: c.text,
        search_text: c.searchText,
        source_path: c.sourcePath,
        meta: c.meta,
        scopes: c.scopes,
        visibility: c.visibility,
        observation_id: c.observationId,
        occurred_at: c.occurredAt?.toISOString() ?? null,
        pii: c.pii,
        pii_categories: c.piiCategories,
        embedding: c.embedding ? `[${c.embedding.join(',')}]` : null,
      })),
    ],
  );
  return rows.map((r) => Number(r.chunkId));
}
