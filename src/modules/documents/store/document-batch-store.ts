/**
 * Set-based document writes: a whole batch of documents locked, rewritten and linked in a
 * constant number of statements (see services/document-batch.ts for the rules). Every
 * statement carries the namespace and a visibility predicate.
 */
import type { Queryable } from '../../../db/database.js';
import { type WrittenEntity, entityChanges, changedIds, noteChanges } from '../../../kernel/change-notice.js';
import { type ChunkWrite, chunkRecordOf } from '../../../kernel/store/chunk-store.js';
import {
  DOCUMENT_LINK_ORIGIN,
  type DocumentBodyWrite,
  type DocumentState,
  LINKS_TO,
  type OpenLink,
} from './document-store.js';
import { deleteChunksPosted, postedColumns, postingsOfInserted } from '../../../kernel/store/postings.js';
import { raw, run, sql } from '../../../kernel/store/sql.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';

/** A document's change-detection state, and whether the writer can see it. */
export interface LockedDocumentState extends DocumentState {
  visible: boolean;
}

/** The stored state of `keys`, locked for the transaction (absent keys are missing from the map). */
export async function lockDocumentStates(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, LockedDocumentState>> {
  if (keys.length === 0) return new Map();
  const { rows } = await run<LockedDocumentState>(
    q,
    sql`/* lockDocumentStates */
     SELECT e.key, ${visible('e', visibleScopes)} AS visible, e.kind, e.title, e.content_hash AS "contentHash"
     FROM entities e WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[])
     ORDER BY e.key FOR UPDATE`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}

/** What a rewritten document's link facts take from it (scopes and source path). */
export interface LinkScopeWrite {
  subject: string;
  sourcePath: string | null;
  scopes: string[];
  visibility: string[];
}

/**
 * Keeps every rewritten document's open link facts in step with its scopes, in one statement.
 * Runs before the documents' own scopes change: "visible" means as the writer found them.
 */
export async function updateLinkFactScopesOf(
  q: Queryable,
  namespace: string,
  rows: readonly LinkScopeWrite[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (rows.length === 0) return;
  const payload = JSON.stringify(
    rows.map((r) => ({
      subject: r.subject,
      source_path: r.sourcePath,
      scopes: r.scopes,
      visibility: r.visibility,
    })),
  );
  const { rows: updated } = await run<{ id: string }>(
    q,
    sql`/* updateLinkFactScopesOf */
     UPDATE facts f SET source_path = r.source_path, scopes = r.scopes, visibility = r.visibility
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(subject text, source_path text, scopes text[], visibility text[])
     WHERE f.namespace = ${namespace} AND f.subject = r.subject AND f.predicate = ${LINKS_TO} AND f.valid_to IS NULL
       AND f.attributes->>'origin' = ${DOCUMENT_LINK_ORIGIN}
       AND (f.scopes IS DISTINCT FROM r.scopes OR f.visibility IS DISTINCT FROM r.visibility
            OR f.source_path IS DISTINCT FROM r.source_path)
       AND ${factVisible('f', visibleScopes)}
     RETURNING f.fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', updated));
}

/**
 * Deletes every chunk of `keys` (documents about to be rewritten), checked visible through
 * their entity as it stands before the rewrite, and their postings, in one statement.
 */
export async function deleteChunksOfDocuments(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (keys.length === 0) return;
  await run(
    q,
    sql`/* deleteChunksOfDocuments */ ${deleteChunksPosted(
      sql`USING entities e
       WHERE c.namespace = ${namespace} AND c.node_key = ANY(${keys}::text[])
         AND e.namespace = c.namespace AND e.key = c.node_key AND ${visible('e', visibleScopes)}`,
    )}`,
  );
}

/**
 * The writer saw the row when it locked it; since then only this batch's upsert has added the
 * document's own visibility to it. So a row is the writer's when it sees it, or when every
 * visibility scope it has is one the document itself sets.
 */
const writtenByThisBatch = (alias: string, visibleScopes: string[] | null, own: string) =>
  sql`(${visible(alias, visibleScopes)} OR ${raw(alias)}.visibility <@ ${raw(own)})`;

/** Stores every document's original text and what belongs with it, in one statement. */
export async function writeDocumentBodies(
  q: Queryable,
  namespace: string,
  rows: readonly DocumentBodyWrite[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (rows.length === 0) return;
  const payload = JSON.stringify(
    rows.map((r) => ({
      key: r.key,
      content: r.content,
      provenance: r.provenance ?? null,
      meta: r.meta,
      content_hash: r.contentHash,
      scopes: r.scopes,
      visibility: r.visibility,
      pii: r.pii,
      pii_categories: r.piiCategories,
    })),
  );
  const { rows: written } = await run<WrittenEntity>(
    q,
    sql`/* writeDocumentBodies */
     UPDATE entities e SET content = r.content, provenance = r.provenance, meta = r.meta,
       content_hash = r.content_hash, scopes = r.scopes, visibility = r.visibility, pii = r.pii,
       pii_categories = r.pii_categories, updated_at = now()
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(key text, content text, provenance jsonb, meta jsonb,
            content_hash text, scopes text[], visibility text[], pii boolean, pii_categories text[])
     WHERE e.namespace = ${namespace} AND e.key = r.key AND ${writtenByThisBatch('e', visibleScopes, 'r.visibility')}
     RETURNING e.key, e.kind, e.content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, written));
}

/**
 * Chunks per insert statement. Indexing a chunk is mostly its HNSW insert (~2 ms at 64–100
 * dimensions on native PostgreSQL, several times that with 1536-dimensional vectors or on a
 * loaded machine): 2,000 chunks in one statement ran past the 15 s statement timeout on a
 * loaded 2-core machine, and the batch fell back to one document at a time. A slice of 250
 * stays well under it.
 */
export const CHUNKS_PER_INSERT = 250;

/**
 * Inserts the chunks of many documents, CHUNKS_PER_INSERT per multi-row statement, each
 * statement writing their BM25 postings too. Each chunk lands only on a document the writer
 * owns here.
 */
export async function insertDocumentChunks(
  q: Queryable,
  namespace: string,
  chunks: readonly { nodeKey: string; chunk: ChunkWrite }[],
  visibleScopes: string[] | null,
): Promise<void> {
  for (let start = 0; start < chunks.length; start += CHUNKS_PER_INSERT) {
    await insertChunkSlice(q, namespace, chunks.slice(start, start + CHUNKS_PER_INSERT), visibleScopes);
  }
}

async function insertChunkSlice(
  q: Queryable,
  namespace: string,
  chunks: readonly { nodeKey: string; chunk: ChunkWrite }[],
  visibleScopes: string[] | null,
): Promise<void> {
  const payload = JSON.stringify(
    chunks.map(({ nodeKey, chunk }) => ({ node_key: nodeKey, ...chunkRecordOf(chunk) })),
  );
  await run(
    q,
    sql`/* insertDocumentChunks */
     WITH written AS (
       INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, ts_config, source_path,
                           meta, scopes, visibility, occurred_at, pii, pii_categories, embedding)
       SELECT ${namespace}, c.node_key, c.ord, c.kind, c.title, c.heading, c.text, c.search_text,
              c.ts_config::regconfig, c.source_path, c.meta, c.scopes, c.visibility, c.occurred_at, c.pii, c.pii_categories,
              c.embedding::vector
       FROM jsonb_to_recordset(${payload}::jsonb) AS c(node_key text, ord int, kind text, title text, heading text,
              text text, search_text text, source_path text, meta jsonb, scopes text[], visibility text[],
              occurred_at timestamptz, pii boolean, pii_categories text[], embedding text, ts_config text)
       JOIN entities e ON e.namespace = ${namespace} AND e.key = c.node_key
       WHERE ${writtenByThisBatch('e', visibleScopes, 'c.visibility')}
       ORDER BY c.node_key, c.ord
       RETURNING ${postedColumns('chunks')}
     ), ${postingsOfInserted('written')}
     SELECT count(*)::int AS n FROM written`,
  );
}

/** The visible open links of every document in `subjects` (facts this module wrote), by subject. */
export async function findOpenLinksOf(
  q: Queryable,
  namespace: string,
  subjects: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, OpenLink[]>> {
  const out = new Map<string, OpenLink[]>();
  if (subjects.length === 0) return out;
  const { rows } = await run<OpenLink & { subject: string }>(
    q,
    sql`/* findOpenLinksOf */
     SELECT f.subject, f.fact_id AS "factId", f.object FROM facts f
     WHERE f.namespace = ${namespace} AND f.subject = ANY(${subjects}::text[]) AND f.predicate = ${LINKS_TO}
       AND f.valid_to IS NULL AND f.status = 'ACTIVE' AND f.attributes->>'origin' = ${DOCUMENT_LINK_ORIGIN}
       AND ${factVisible('f', visibleScopes)}
     ORDER BY f.subject, f.object`,
  );
  for (const { subject, ...link } of rows) {
    const list = out.get(subject);
    if (list) list.push(link);
    else out.set(subject, [link]);
  }
  return out;
}
