import type { Queryable } from '../../../db/database.js';
import { type WrittenEntity, entityChanges, changedIds, noteChanges } from '../../../kernel/change-notice.js';
import { ENTITY_COLUMNS, type EntityRow } from '../../../kernel/store/entity-store.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';

/**
 * Document-level SQL: the original text, the caller's provenance and meta kept on the entity
 * row, the change hash, and the `LINKS_TO` facts a document's `links` produce.
 */

export interface DocumentRow extends EntityRow {
  content: string | null;
  provenance: unknown;
  meta: Record<string, unknown> | null;
  /** Visible chunks of the node. */
  chunkCount: number;
}

export interface DocumentState {
  key: string;
  kind: string;
  title: string;
  contentHash: string | null;
}

/** Marks the facts this module manages, so links asserted by other means are never closed here. */
export const DOCUMENT_LINK_ORIGIN = 'document-links';
export const LINKS_TO = 'LINKS_TO';

/** The row and its visible chunk count; null when absent or invisible. */
export async function findDocument(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<DocumentRow | null> {
  const scopesParam = param(visibleScopes);
  const { rows } = await run<DocumentRow>(
    q,
    sql`/* findDocument */
     SELECT ${raw(ENTITY_COLUMNS)}, e.content, e.provenance, e.meta,
            (SELECT count(*)::int FROM chunks c
             WHERE c.namespace = e.namespace AND c.node_key = e.key AND ${visible('c', scopesParam)}) AS "chunkCount"
     FROM entities e
     WHERE e.namespace = ${namespace} AND e.key = ${key} AND ${visible('e', scopesParam)}`,
  );
  return rows[0] ?? null;
}

/** Change-detection state of the given keys (absent keys are missing from the map). */
export async function findDocumentStates(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, DocumentState>> {
  if (keys.length === 0) return new Map();
  const { rows } = await run<DocumentState>(
    q,
    sql`/* findDocumentStates */
     SELECT e.key, e.kind, e.title, e.content_hash AS "contentHash" FROM entities e
     WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[]) AND ${visible('e', visibleScopes)}`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}

/** The same state under a row lock, inside the item's savepoint; null when absent or hidden. */
export async function lockDocumentState(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<DocumentState | null> {
  const { rows } = await run<DocumentState>(
    q,
    sql`/* lockDocumentState */
     SELECT e.key, e.kind, e.title, e.content_hash AS "contentHash" FROM entities e
     WHERE e.namespace = ${namespace} AND e.key = ${key} AND ${visible('e', visibleScopes)} FOR UPDATE`,
  );
  return rows[0] ?? null;
}

export interface DocumentBodyWrite {
  key: string;
  content: string;
  provenance: unknown;
  meta: Record<string, unknown>;
  /** Null while the chunks of a large document are still being written (see markDocumentComplete). */
  contentHash: string | null;
  /** A document write is authoritative for its own visibility: these replace, never merge. */
  scopes: string[];
  visibility: string[];
  pii: boolean;
  piiCategories: string[];
}

/** Stores the original text and what belongs with it on the (already upserted) entity row. */
export async function writeDocumentBody(
  q: Queryable,
  namespace: string,
  w: DocumentBodyWrite,
): Promise<void> {
  const { rows } = await run<WrittenEntity>(
    q,
    sql`/* writeDocumentBody */
     UPDATE entities SET content = ${w.content}, provenance = ${w.provenance === undefined || w.provenance === null ? null : JSON.stringify(w.provenance)}::jsonb, meta = ${w.meta}::jsonb, content_hash = ${w.contentHash},
       scopes = ${w.scopes}::text[], visibility = ${w.visibility}::text[], pii = ${w.pii}, pii_categories = ${w.piiCategories}::text[], updated_at = now()
     WHERE namespace = ${namespace} AND key = ${w.key}
     RETURNING key, kind, content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, rows));
}

/** The last step of a document written in steps: its hash says its chunks are all in. */
export async function markDocumentComplete(
  q: Queryable,
  namespace: string,
  key: string,
  contentHash: string,
  visibleScopes: string[] | null,
): Promise<void> {
  const { rows } = await run<WrittenEntity>(
    q,
    sql`/* markDocumentComplete */
     UPDATE entities e SET content_hash = ${contentHash}
     WHERE e.namespace = ${namespace} AND e.key = ${key} AND e.content_hash IS NULL AND ${visible('e', visibleScopes)}
     RETURNING e.key, e.kind, e.content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, rows));
}

/** Which of `keys` name an entity the principal can see (placeholders count: they are nodes). */
export async function findExistingKeys(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await run<{ key: string }>(
    q,
    sql`/* findExistingKeys */
     SELECT e.key FROM entities e
     WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[]) AND ${visible('e', visibleScopes)}`,
  );
  return new Set(rows.map((r) => r.key));
}

export interface OpenLink {
  factId: string;
  object: string;
}

export interface LinkFactWrite {
  factId: string;
  subject: string;
  object: string;
  validFrom: Date;
  sourcePath: string | null;
  scopes: string[];
  visibility: string[];
}

/** Inserts `LINKS_TO` facts (ASSERTED, confidence 1); an id seen before is reopened. */
export async function insertLinkFacts(
  q: Queryable,
  namespace: string,
  links: LinkFactWrite[],
): Promise<void> {
  if (links.length === 0) return;
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* insertLinkFacts */
     INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, evidence, confidence,
                        source_path, scopes, visibility, attributes)
     SELECT ${namespace}, l.fact_id, l.subject, ${LINKS_TO}, l.object, l.valid_from, 'ASSERTED', 1, l.source_path, l.scopes,
            l.visibility, jsonb_build_object('origin', ${DOCUMENT_LINK_ORIGIN}::text)
     FROM jsonb_to_recordset(${JSON.stringify(
       links.map((l) => ({
         fact_id: l.factId,
         subject: l.subject,
         object: l.object,
         valid_from: l.validFrom.toISOString(),
         source_path: l.sourcePath,
         scopes: l.scopes,
         visibility: l.visibility,
       })),
     )}::jsonb) AS l(fact_id text, subject text, object text, valid_from timestamptz,
            source_path text, scopes text[], visibility text[])
     ON CONFLICT (namespace, fact_id) DO UPDATE SET valid_to = NULL, status = 'ACTIVE',
       source_path = excluded.source_path, scopes = excluded.scopes, visibility = excluded.visibility
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
}

/** Ends links a rewrite no longer lists: `validTo` is set, nothing is deleted (history stays). */
export async function closeLinkFacts(
  q: Queryable,
  namespace: string,
  factIds: readonly string[],
  at: Date,
  visibleScopes: string[] | null,
): Promise<void> {
  if (factIds.length === 0) return;
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* closeLinkFacts */
     UPDATE facts SET valid_to = greatest(valid_from, ${at}::timestamptz)
     WHERE namespace = ${namespace} AND fact_id = ANY(${factIds}::text[]) AND valid_to IS NULL
       AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
}

/**
 * Keeps the link facts' scopes in step with their document when only the document changed.
 * Runs before the document's own scopes change, so "visible" means visible as the writer found them.
 */
export async function updateLinkFactScopes(
  q: Queryable,
  namespace: string,
  subject: string,
  sourcePath: string | null,
  scopes: string[],
  visibility: string[],
  visibleScopes: string[] | null,
): Promise<void> {
  const sourcePathParam = param(sourcePath);
  const scopesParam = param(scopes);
  const visibilityParam = param(visibility);
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* updateLinkFactScopes */
     UPDATE facts SET source_path = ${sourcePathParam}, scopes = ${scopesParam}::text[], visibility = ${visibilityParam}::text[]
     WHERE namespace = ${namespace} AND subject = ${subject} AND predicate = ${LINKS_TO} AND valid_to IS NULL
       AND attributes->>'origin' = ${DOCUMENT_LINK_ORIGIN}
       AND (scopes IS DISTINCT FROM ${scopesParam}::text[] OR visibility IS DISTINCT FROM ${visibilityParam}::text[]
            OR source_path IS DISTINCT FROM ${sourcePathParam})
       AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
}
