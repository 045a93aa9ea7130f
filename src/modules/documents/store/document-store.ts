import type { Queryable } from '../../../db/database.js';
import { ENTITY_COLUMNS, type EntityRow } from '../../../kernel/store/entity-store.js';
import { factVisibleTo, visibleTo } from '../../../kernel/store/visibility.js';

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
  const { rows } = await q.query<DocumentRow>(
    `/* findDocument */
     SELECT ${ENTITY_COLUMNS}, e.content, e.provenance, e.meta,
            (SELECT count(*)::int FROM chunks c
             WHERE c.namespace = e.namespace AND c.node_key = e.key AND ${visibleTo('c', '$3')}) AS "chunkCount"
     FROM entities e
     WHERE e.namespace = $1 AND e.key = $2 AND ${visibleTo('e', '$3')}`,
    [namespace, key, visibleScopes],
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
  const { rows } = await q.query<DocumentState>(
    `/* findDocumentStates */
     SELECT e.key, e.kind, e.title, e.content_hash AS "contentHash" FROM entities e
     WHERE e.namespace = $1 AND e.key = ANY($2::text[]) AND ${visibleTo('e', '$3')}`,
    [namespace, keys, visibleScopes],
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
  const { rows } = await q.query<DocumentState>(
    `/* lockDocumentState */
     SELECT e.key, e.kind, e.title, e.content_hash AS "contentHash" FROM entities e
     WHERE e.namespace = $1 AND e.key = $2 AND ${visibleTo('e', '$3')} FOR UPDATE`,
    [namespace, key, visibleScopes],
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
  await q.query(
    `/* writeDocumentBody */
     UPDATE entities SET content = $3, provenance = $4::jsonb, meta = $5::jsonb, content_hash = $6,
       scopes = $7::text[], visibility = $8::text[], pii = $9, pii_categories = $10::text[], updated_at = now()
     WHERE namespace = $1 AND key = $2`,
    [
      namespace,
      w.key,
      w.content,
      w.provenance === undefined || w.provenance === null ? null : JSON.stringify(w.provenance),
      w.meta,
      w.contentHash,
      w.scopes,
      w.visibility,
      w.pii,
      w.piiCategories,
    ],
  );
}

/** The last step of a document written in steps: its hash says its chunks are all in. */
export async function markDocumentComplete(
  q: Queryable,
  namespace: string,
  key: string,
  contentHash: string,
  visibleScopes: string[] | null,
): Promise<void> {
  await q.query(
    `/* markDocumentComplete */
     UPDATE entities e SET content_hash = $3
     WHERE e.namespace = $1 AND e.key = $2 AND e.content_hash IS NULL AND ${visibleTo('e', '$4')}`,
    [namespace, key, contentHash, visibleScopes],
  );
}

/** Which of `keys` name an entity the principal can see (placeholders count: they are nodes). */
export async function findExistingKeys(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await q.query<{ key: string }>(
    `/* findExistingKeys */
     SELECT e.key FROM entities e
     WHERE e.namespace = $1 AND e.key = ANY($2::text[]) AND ${visibleTo('e', '$3')}`,
    [namespace, keys, visibleScopes],
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
  await q.query(
    `/* insertLinkFacts */
     INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, evidence, confidence,
                        source_path, scopes, visibility, attributes)
     SELECT $1, l.fact_id, l.subject, $2, l.object, l.valid_from, 'ASSERTED', 1, l.source_path, l.scopes,
            l.visibility, jsonb_build_object('origin', $3::text)
     FROM jsonb_to_recordset($4::jsonb) AS l(fact_id text, subject text, object text, valid_from timestamptz,
            source_path text, scopes text[], visibility text[])
     ON CONFLICT (namespace, fact_id) DO UPDATE SET valid_to = NULL, status = 'ACTIVE',
       source_path = excluded.source_path, scopes = excluded.scopes, visibility = excluded.visibility`,
    [
      namespace,
      LINKS_TO,
      DOCUMENT_LINK_ORIGIN,
      JSON.stringify(
        links.map((l) => ({
          fact_id: l.factId,
          subject: l.subject,
          object: l.object,
          valid_from: l.validFrom.toISOString(),
          source_path: l.sourcePath,
          scopes: l.scopes,
          visibility: l.visibility,
        })),
      ),
    ],
  );
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
  await q.query(
    `/* closeLinkFacts */
     UPDATE facts SET valid_to = greatest(valid_from, $3::timestamptz)
     WHERE namespace = $1 AND fact_id = ANY($2::text[]) AND valid_to IS NULL
       AND ${factVisibleTo('facts', '$4')}`,
    [namespace, factIds, at, visibleScopes],
  );
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
  await q.query(
    `/* updateLinkFactScopes */
     UPDATE facts SET source_path = $5, scopes = $6::text[], visibility = $7::text[]
     WHERE namespace = $1 AND subject = $2 AND predicate = $3 AND valid_to IS NULL
       AND attributes->>'origin' = $4
       AND (scopes IS DISTINCT FROM $6::text[] OR visibility IS DISTINCT FROM $7::text[]
            OR source_path IS DISTINCT FROM $5)
       AND ${factVisibleTo('facts', '$8')}`,
    [namespace, subject, LINKS_TO, DOCUMENT_LINK_ORIGIN, sourcePath, scopes, visibility, visibleScopes],
  );
}
