import type { Queryable } from '../../db/database.js';
import { namedIn } from './entity-link-store.js';
import { ENTITY_JSON, type EntityRow, entityRowOfJson } from './entity-store.js';
import { deleteChunksPosted, postedColumns, postingsOfInserted } from './postings.js';
import { param, raw, run, sql } from './sql.js';
import { visible } from './visibility.js';

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
  const { rows } = await run<ChunkRow>(
    q,
    sql`/* findChunksByIds */
     SELECT ${raw(CHUNK_COLUMNS)} FROM chunks c
     WHERE c.namespace = ${namespace} AND c.chunk_id = ANY(${chunkIds}::bigint[]) AND ${visible('c', visibleScopes)}`,
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
  /** The text-search configuration the chunk is indexed with (its language). */
  tsConfig: string;
}

/**
 * A chunk as one record of the `jsonb_to_recordset` payloads the chunk inserts read (column
 * names as in the table; the embedding as pgvector text). A statement reads only the columns
 * it declares.
 */
export function chunkRecordOf(c: ChunkWrite) {
  return {
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
    ts_config: c.tsConfig,
  };
}

/**
 * Replaces every chunk of `nodeKey` with `chunks` in one multi-row statement (plus the delete):
 * rewriting a node never leaves a mix of old and new chunks. Each statement writes its postings.
 */
export async function replaceChunks(
  q: Queryable,
  namespace: string,
  nodeKey: string,
  chunks: ChunkWrite[],
): Promise<number[]> {
  await deleteChunksOfNode(q, namespace, nodeKey);
  return appendChunks(q, namespace, nodeKey, chunks);
}

/** Deletes every chunk of one node, with its postings. */
export async function deleteChunksOfNode(q: Queryable, namespace: string, nodeKey: string): Promise<void> {
  await run(
    q,
    sql`/* deleteChunksOfNode */ ${deleteChunksPosted(sql`WHERE c.namespace = ${namespace} AND c.node_key = ${nodeKey}`)}`,
  );
}

/** Adds chunks to a node without touching its others (a large document arrives in steps). */
export async function appendChunks(
  q: Queryable,
  namespace: string,
  nodeKey: string,
  chunks: ChunkWrite[],
): Promise<number[]> {
  if (chunks.length === 0) return [];
  const { rows } = await run<{ chunkId: number }>(
    q,
    sql`/* insertChunks */
     WITH written AS (
       INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, ts_config, source_path,
                           meta, scopes, visibility, observation_id, occurred_at, pii, pii_categories, embedding)
       SELECT ${namespace}, ${nodeKey}, c.ord, c.kind, c.title, c.heading, c.text, c.search_text, c.ts_config::regconfig, c.source_path,
              c.meta, c.scopes, c.visibility, c.observation_id, c.occurred_at, c.pii, c.pii_categories, c.embedding::vector
       FROM jsonb_to_recordset(${
         // Serialised here: an array parameter would reach node-postgres as a PostgreSQL array.
         JSON.stringify(chunks.map(chunkRecordOf))
       }::jsonb) AS c(ord int, kind text, title text, heading text, text text, search_text text,
              source_path text, meta jsonb, scopes text[], visibility text[], observation_id text, occurred_at timestamptz,
              pii boolean, pii_categories text[], embedding text, ts_config text)
       ORDER BY c.ord
       RETURNING ${postedColumns('chunks')}, chunks.ord
     ), ${postingsOfInserted('written')}
     SELECT chunk_id AS "chunkId" FROM written ORDER BY ord`,
  );
  return rows.map((r) => Number(r.chunkId));
}

export interface ChunkText {
  order: number;
  heading: string | null;
  text: string;
}

/** A node's visible chunks in order (for stitching a document back together). */
export async function findChunkTextsOfNode(
  q: Queryable,
  namespace: string,
  nodeKey: string,
  visibleScopes: string[] | null,
): Promise<ChunkText[]> {
  const { rows } = await run<ChunkText>(
    q,
    sql`/* findChunkTextsOfNode */
     SELECT c.ord AS "order", c.heading, c.text FROM chunks c
     WHERE c.namespace = ${namespace} AND c.node_key = ${nodeKey} AND ${visible('c', visibleScopes)}
     ORDER BY c.ord`,
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Re-embedding (`memgate reindex`). Maintenance over every namespace: the keyset walks
// (namespace, chunk_id), which the (namespace, chunk_id) unique index serves.

export interface ChunkForEmbedding {
  namespace: string;
  chunkId: number;
  title: string | null;
  heading: string | null;
  text: string;
}

export interface ChunkCursor {
  namespace: string;
  chunkId: number;
}

export async function countAllChunks(q: Queryable): Promise<number> {
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* countAllChunks */ SELECT count(*)::int AS n FROM chunks`,
  );
  return rows[0]?.n ?? 0;
}

/** The next `limit` chunks after `after`, in (namespace, chunk_id) order. */
export async function listChunksForEmbedding(
  q: Queryable,
  after: ChunkCursor | null,
  limit: number,
): Promise<ChunkForEmbedding[]> {
  const namespaceParam = param(after?.namespace ?? null);
  const { rows } = await run<ChunkForEmbedding>(
    q,
    sql`/* listChunksForEmbedding */
     SELECT c.namespace, c.chunk_id AS "chunkId", c.title, c.heading, c.text FROM chunks c
     WHERE ${namespaceParam}::text IS NULL OR (c.namespace, c.chunk_id) > (${namespaceParam}::text, ${after?.chunkId ?? null}::bigint)
     ORDER BY c.namespace, c.chunk_id
     LIMIT ${limit}`,
  );
  return rows.map((r) => ({ ...r, chunkId: Number(r.chunkId) }));
}

/** Sets embeddings by (namespace, chunk id); no indexed column changes, so no posting does. */
export async function updateChunkEmbeddings(
  q: Queryable,
  rows: { namespace: string; chunkId: number; embedding: number[] }[],
): Promise<void> {
  if (rows.length === 0) return;
  await run(
    q,
    sql`/* updateChunkEmbeddings */
     UPDATE chunks c SET embedding = v.embedding::vector
     FROM jsonb_to_recordset(${JSON.stringify(
       rows.map((r) => ({
         namespace: r.namespace,
         chunk_id: r.chunkId,
         embedding: `[${r.embedding.join(',')}]`,
       })),
     )}::jsonb) AS v(namespace text, chunk_id bigint, embedding text)
     WHERE c.namespace = v.namespace AND c.chunk_id = v.chunk_id`,
  );
}

export const CHUNK_EMBEDDING_INDEX = 'chunks_embedding_idx';

/** Dimension of `chunks.embedding` as the catalog has it (atttypmod holds it for vector). */
export async function chunkEmbeddingDimension(q: Queryable): Promise<number | null> {
  const { rows } = await run<{ dim: number }>(
    q,
    sql`/* chunkEmbeddingDimension */
     SELECT a.atttypmod AS dim FROM pg_attribute a
     WHERE a.attrelid = 'chunks'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped`,
  );
  const dim = rows[0]?.dim;
  return dim !== undefined && dim > 0 ? dim : null;
}

/** Bulk re-embedding is much faster without the HNSW index; it is rebuilt once at the end. */
export async function dropChunkEmbeddingIndex(q: Queryable): Promise<void> {
  await run(q, sql`/* dropChunkEmbeddingIndex */ DROP INDEX IF EXISTS ${raw(CHUNK_EMBEDDING_INDEX)}`);
}

export async function createChunkEmbeddingIndex(q: Queryable): Promise<void> {
  await run(
    q,
    sql`/* createChunkEmbeddingIndex */
     CREATE INDEX IF NOT EXISTS ${raw(CHUNK_EMBEDDING_INDEX)} ON chunks USING hnsw (embedding vector_cosine_ops)`,
  );
}

/** A new dimension invalidates every vector: the column is retyped and emptied. */
export async function resizeChunkEmbeddings(q: Queryable, dimensions: number): Promise<void> {
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`bad dimension ${dimensions}`);
  await run(
    q,
    sql`/* resizeChunkEmbeddings */
     ALTER TABLE chunks ALTER COLUMN embedding TYPE vector(${raw(String(dimensions))}) USING NULL`,
  );
}

/** Records the model and dimension the vectors are now built with. */
export async function writeEmbeddingSettings(q: Queryable, model: string, dimensions: number): Promise<void> {
  await run(
    q,
    sql`/* writeEmbeddingSettings */
     INSERT INTO memgate_settings (embedding_model, embedding_dim) VALUES (${model}, ${dimensions})
     ON CONFLICT (singleton) DO UPDATE SET embedding_model = excluded.embedding_model,
       embedding_dim = excluded.embedding_dim, updated_at = now()`,
  );
}

/** Vector columns besides `chunks.embedding` (reindex only knows how to rebuild chunks). */
export async function otherVectorColumns(q: Queryable): Promise<string[]> {
  const { rows } = await run<{ col: string }>(
    q,
    sql`/* otherVectorColumns */
     SELECT c.relname || '.' || a.attname AS col
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_type t ON t.oid = a.atttypid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE t.typname = 'vector' AND c.relkind = 'r' AND NOT a.attisdropped AND n.nspname = current_schema()
       AND NOT (c.relname = 'chunks' AND a.attname = 'embedding')
     ORDER BY 1`,
  );
  return rows.map((r) => r.col);
}

/** A search hit's chunk row and the entities the query names that its observation is linked to. */
export interface HitChunkRow extends ChunkRow {
  /** Sorted entity keys; empty for a chunk that is not an observation's own text, or without a query. */
  namedEntities: string[];
  /** The chunk's node as `findEntitiesByKeys` reads it; null where absent or invisible. */
  owner: EntityRow | null;
}

/**
 * The rows of a search's hits, in the order of `refs` (null where absent or invisible), each
 * with its node's entity row and the entities `query` names that its observation is linked to
 * (actor, subject or mention; only entities the caller may see): the chunk read, the owners'
 * read and the entity-name boost's lookup in one statement. Only an observation's own text (node = observation) is looked up; `query` null
 * looks up nothing (and the statement is the plain row read). Index-backed: chunks and entities by primary key, mentions by observation.
 */
export async function findHitChunks(
  q: Queryable,
  refs: readonly { namespace: string; chunkId: number }[],
  query: string | null,
  visibleScopes: readonly string[] | null,
): Promise<(HitChunkRow | null)[]> {
  if (refs.length === 0) return [];
  const namespaces = [...new Set(refs.map((r) => r.namespace))];
  const ids = [...new Set(refs.map((r) => r.chunkId))];
  const named = query !== null && query.trim() !== '' ? query : null;
  // Without a query the statement has no subquery to plan (planning it costs more than running it).
  const namedEntities =
    named === null
      ? sql`NULL::text[]`
      : sql`CASE WHEN c.observation_id = c.node_key THEN
              (SELECT array_agg(m.entity_key ORDER BY m.entity_key)
               FROM mentions m JOIN entities e ON e.namespace = m.namespace AND e.key = m.entity_key
               WHERE m.namespace = c.namespace AND m.observation_id = c.observation_id
                 AND ${visible('e', visibleScopes)} AND ${namedIn('e', named)})
            END`;
  const { rows } = await run<Omit<HitChunkRow, 'owner'> & { owner: Record<string, unknown> | null }>(
    q,
    sql`/* findHitChunks */
     SELECT ${raw(CHUNK_COLUMNS)}, ${namedEntities} AS "namedEntities",
            (SELECT ${raw(ENTITY_JSON)} FROM entities e
             WHERE e.namespace = c.namespace AND e.key = c.node_key AND ${visible('e', visibleScopes)}) AS owner
     FROM chunks c
     WHERE c.namespace = ANY(${namespaces}::text[]) AND c.chunk_id = ANY(${ids}::bigint[])
       AND ${visible('c', visibleScopes)}`,
  );
  const byRef = new Map(rows.map((r) => [`${r.namespace}\u0000${Number(r.chunkId)}`, r]));
  return refs.map((r) => {
    const row = byRef.get(`${r.namespace}\u0000${r.chunkId}`);
    if (!row) return null;
    const owner = row.owner ? entityRowOfJson(row.owner) : null;
    return { ...row, namedEntities: row.namedEntities ?? [], owner };
  });
}
