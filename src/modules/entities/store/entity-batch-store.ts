/**
 * Set-based entity writes: a whole batch of upserts in a constant number of statements. The
 * service folds the batch's writes per key (see entity-batch.ts); these statements lock what
 * exists, insert the new keys, update the changed ones and open attribute versions, each for
 * every row at once. The namespace and the visibility predicate are in every statement: a
 * hidden row is reported (`visible` false) and never changed.
 */
import type { Queryable } from '../../../db/database.js';
import { type WrittenEntity, entityChanges, noteChanges } from '../../../kernel/change-notice.js';
import { run, sql } from '../../../kernel/store/sql.js';
import { visible } from '../../../kernel/store/visibility.js';

/** What an upsert compares against: the stored row, and whether the writer can see it. */
export interface EntityState {
  key: string;
  visible: boolean;
  kind: string;
  title: string;
  attributes: Record<string, unknown>;
  placeholder: boolean;
  scopes: string[];
  sourcePath: string | null;
  confidence: number | null;
}

/** The stored state of `keys` (absent keys are missing from the map), locked for the transaction. */
export async function lockEntityStates(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, EntityState>> {
  if (keys.length === 0) return new Map();
  const { rows } = await run<EntityState>(
    q,
    sql`/* lockEntityStates */
     SELECT e.key, ${visible('e', visibleScopes)} AS visible, e.kind, e.title, e.attributes, e.placeholder,
            e.scopes, e.source_path AS "sourcePath", e.confidence
     FROM entities e WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[])
     ORDER BY e.key FOR UPDATE`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}

/** A new entity row, already folded over every write of its key in the batch. */
export interface EntityInsertRow {
  key: string;
  kind: string;
  title: string;
  attributes: Record<string, unknown>;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  confidence: number | null;
  origin: 'VAULT' | 'AGENT';
  pii: boolean;
  piiCategories: string[];
  lastSeen: Date;
}

/** Inserts new entities in one statement; returns the keys inserted (a concurrent writer may win one). */
export async function insertEntityRows(
  q: Queryable,
  namespace: string,
  rows: readonly EntityInsertRow[],
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const payload = JSON.stringify(
    rows.map((r) => ({
      key: r.key,
      kind: r.kind,
      title: r.title,
      attributes: r.attributes,
      scopes: r.scopes,
      visibility: r.visibility,
      source_path: r.sourcePath,
      confidence: r.confidence,
      origin: r.origin,
      pii: r.pii,
      pii_categories: r.piiCategories,
      last_seen: r.lastSeen.toISOString(),
    })),
  );
  const { rows: inserted } = await run<WrittenEntity>(
    q,
    sql`/* insertEntityRows */
     INSERT INTO entities (namespace, key, kind, title, attributes, scopes, visibility, source_path, confidence,
                           origin, pii, pii_categories, last_seen)
     SELECT ${namespace}, r.key, r.kind, r.title, r.attributes, r.scopes, r.visibility, r.source_path, r.confidence,
            r.origin, r.pii, r.pii_categories, r.last_seen
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(key text, kind text, title text, attributes jsonb, scopes text[],
            visibility text[], source_path text, confidence double precision, origin text, pii boolean,
            pii_categories text[], last_seen timestamptz)
     ON CONFLICT (namespace, key) DO NOTHING
     RETURNING key, kind, content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, inserted));
  return new Set(inserted.map((r) => r.key));
}

/** The change to an existing entity: final values, and what is unioned into visibility and PII marks. */
export interface EntityUpdateRow {
  key: string;
  kind: string;
  title: string;
  attributes: Record<string, unknown>;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  confidence: number | null;
  pii: boolean;
  piiCategories: string[];
  lastSeen: Date;
}

/** Updates every changed entity in one statement (only rows the writer can see). */
export async function updateEntityRows(
  q: Queryable,
  namespace: string,
  rows: readonly EntityUpdateRow[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (rows.length === 0) return;
  const payload = JSON.stringify(
    rows.map((r) => ({
      key: r.key,
      kind: r.kind,
      title: r.title,
      attributes: r.attributes,
      scopes: r.scopes,
      visibility: r.visibility,
      source_path: r.sourcePath,
      confidence: r.confidence,
      pii: r.pii,
      pii_categories: r.piiCategories,
      last_seen: r.lastSeen.toISOString(),
    })),
  );
  const { rows: updated } = await run<WrittenEntity>(
    q,
    sql`/* updateEntityRows */
     UPDATE entities e SET kind = r.kind, title = r.title, attributes = r.attributes, scopes = r.scopes,
       visibility = (SELECT coalesce(array_agg(DISTINCT v ORDER BY v), '{}') FROM unnest(e.visibility || r.visibility) v),
       source_path = coalesce(r.source_path, e.source_path), confidence = coalesce(r.confidence, e.confidence),
       placeholder = false, pii = e.pii OR r.pii,
       pii_categories = (SELECT coalesce(array_agg(DISTINCT c ORDER BY c), '{}') FROM unnest(e.pii_categories || r.pii_categories) c),
       last_seen = greatest(e.last_seen, r.last_seen), updated_at = now()
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(key text, kind text, title text, attributes jsonb,
            scopes text[], visibility text[], source_path text, confidence double precision, pii boolean,
            pii_categories text[], last_seen timestamptz)
     WHERE e.namespace = ${namespace} AND e.key = r.key AND ${visible('e', visibleScopes)}
     RETURNING e.key, e.kind, e.content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, updated));
}

export interface EntityVersionRow {
  key: string;
  validFrom: Date;
  title: string;
  attributes: Record<string, unknown>;
  observationId: string | null;
}

/**
 * Opens one attribute version per key (keys distinct): the version in force at its validFrom
 * is closed there, and the new one lasts until the next known version, as the one-row write does.
 */
export async function openAttributeVersions(
  q: Queryable,
  namespace: string,
  rows: readonly EntityVersionRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const payload = JSON.stringify(
    rows.map((r) => ({
      key: r.key,
      valid_from: r.validFrom.toISOString(),
      title: r.title,
      attributes: r.attributes,
      observation_id: r.observationId,
    })),
  );
  await run(
    q,
    sql`/* openAttributeVersions */
     WITH r AS (
       SELECT * FROM jsonb_to_recordset(${payload}::jsonb)
         AS r(key text, valid_from timestamptz, title text, attributes jsonb, observation_id text)
     ), closed AS (
       UPDATE entity_versions v SET valid_to = r.valid_from
       FROM r
       WHERE v.namespace = ${namespace} AND v.key = r.key AND v.valid_from < r.valid_from
         AND (v.valid_to IS NULL OR v.valid_to > r.valid_from)
       RETURNING v.key
     )
     INSERT INTO entity_versions (namespace, key, valid_from, valid_to, title, attributes, observation_id)
     SELECT ${namespace}, r.key, r.valid_from,
            (SELECT min(n.valid_from) FROM entity_versions n
             WHERE n.namespace = ${namespace} AND n.key = r.key AND n.valid_from > r.valid_from),
            r.title, r.attributes, r.observation_id
     FROM r
     ON CONFLICT (namespace, key, valid_from) DO UPDATE SET title = excluded.title, attributes = excluded.attributes,
       observation_id = coalesce(excluded.observation_id, entity_versions.observation_id)`,
  );
}
