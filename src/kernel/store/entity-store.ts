import type { Queryable } from '../../db/database.js';
import { canonicalJson } from '../../domain/ids.js';
import { type WrittenEntity, entityChanges, changedIds, noteChanges } from '../change-notice.js';
import { visible } from './visibility.js';
import { param, raw, run, sql } from './sql.js';

export interface EntityRow {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  attributes: Record<string, unknown>;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  confidence: number | null;
  origin: 'VAULT' | 'AGENT';
  placeholder: boolean;
  stale: boolean;
  aliases: string[];
  pii: boolean;
  piiCategories: string[];
  lastSeen: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const ENTITY_COLUMNS = `
  e.namespace, e.key, e.kind, e.title, e.attributes, e.scopes, e.visibility,
  e.source_path AS "sourcePath", e.confidence, e.origin, e.placeholder, e.stale, e.aliases,
  e.pii, e.pii_categories AS "piiCategories", e.last_seen AS "lastSeen",
  e.created_at AS "createdAt", e.updated_at AS "updatedAt"`;

/**
 * Entity columns a read may select, by the row model's property; namespace, key and the PII
 * flags (which the masking and the PII audit read) always come.
 */
export const ENTITY_COLUMN_SQL = {
  kind: 'kind',
  title: 'title',
  attributes: 'attributes',
  scopes: 'scopes',
  visibility: 'visibility',
  sourcePath: 'source_path',
  confidence: 'confidence',
  origin: 'origin',
  placeholder: 'placeholder',
  stale: 'stale',
  aliases: 'aliases',
  lastSeen: 'last_seen',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Partial<Record<keyof EntityRow, string>>;

export type EntityColumn = keyof typeof ENTITY_COLUMN_SQL;

/** The select list of `columns` of `e`, each named as the row model names it. */
function selectedEntityColumns(columns: readonly EntityColumn[]): string {
  const named = columns.map((c) => `e.${ENTITY_COLUMN_SQL[c]} AS "${c}"`);
  return ['e.namespace', 'e.key', 'e.pii', 'e.pii_categories AS "piiCategories"', ...named].join(', ');
}

/**
 * A row read with some columns only, the others at neutral values: only the fields whose
 * columns were selected are resolved from it (the columns are chosen from that selection).
 */
function withNeutralColumns(row: Partial<EntityRow>): EntityRow {
  return {
    namespace: '',
    key: '',
    kind: '',
    title: '',
    attributes: {},
    scopes: [],
    visibility: [],
    sourcePath: null,
    confidence: null,
    origin: 'AGENT',
    placeholder: false,
    stale: false,
    aliases: [],
    pii: false,
    piiCategories: [],
    lastSeen: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...row,
  };
}

/**
 * `ENTITY_COLUMNS` of the entity `e` in scope as one JSON object, for a statement that reads an
 * entity beside its own rows: the row `findEntitiesByKeys` reads, so a loader may be primed with it.
 */
export const ENTITY_JSON = `(SELECT to_jsonb(r) FROM (SELECT ${ENTITY_COLUMNS}) r)`;

/** An `entityJson` object as the row (JSON has no timestamps: they come back as text). */
export function entityRowOfJson(json: Record<string, unknown>): EntityRow {
  const time = (v: unknown) => new Date(v as string);
  return {
    ...(json as unknown as EntityRow),
    lastSeen: json.lastSeen == null ? null : time(json.lastSeen),
    createdAt: time(json.createdAt),
    updatedAt: time(json.updatedAt),
  };
}

export interface EntityWrite {
  key: string;
  kind: string;
  /** null: an update keeps the stored title; a new entity takes its key. */
  title: string | null;
  attributes: Record<string, unknown> | null;
  validFrom: Date;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  confidence: number | null;
  origin: 'VAULT' | 'AGENT';
  pii: boolean;
  piiCategories: string[];
  observationId: string | null;
}

/** HIDDEN: the key is taken by an entity the writer cannot see; nothing was written. */
export type EntityWriteStatus = 'CREATED' | 'UPDATED' | 'UNCHANGED' | 'HIDDEN';

/** Rows in the order of `keys`; null where absent or invisible. */
export async function findEntitiesByKeys(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<(EntityRow | null)[]> {
  const { rows } = await run<EntityRow>(
    q,
    sql`/* findEntitiesByKeys */
     SELECT ${raw(ENTITY_COLUMNS)} FROM entities e
     WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[]) AND ${visible('e', visibleScopes)}`,
  );
  const byKey = new Map(rows.map((r) => [r.key, r]));
  return keys.map((k) => byKey.get(k) ?? null);
}

export interface EntityListFilter {
  kinds?: string[] | null;
  /** Kinds left out (applied after `kinds`). */
  excludeKinds?: string[] | null;
  keyPrefix?: string | null;
  afterKey?: string | null;
  beforeKey?: string | null;
  limit: number;
  /** Newest keys first is not needed: keys order is stable and cheap on the primary key. */
  backwards?: boolean;
}

/**
 * A page of entities in key order. With `columns`, only those (and namespace, key and the PII
 * flags) are read and the rest of each row holds neutral values; without, whole rows.
 */
export async function listEntities(
  q: Queryable,
  namespace: string,
  filter: EntityListFilter,
  visibleScopes: string[] | null,
  columns: readonly EntityColumn[] | null = null,
): Promise<EntityRow[]> {
  const kinds = param(filter.kinds ?? null);
  const keyPrefix = param(filter.keyPrefix ?? null);
  const afterKey = param(filter.afterKey ?? null);
  const beforeKey = param(filter.beforeKey ?? null);
  const excludeKinds = param(filter.excludeKinds ?? null);
  const { rows } = await run<EntityRow>(
    q,
    sql`/* listEntities */
     SELECT ${raw(columns ? selectedEntityColumns(columns) : ENTITY_COLUMNS)} FROM entities e
     WHERE e.namespace = ${namespace}
       AND (${kinds}::text[] IS NULL OR e.kind = ANY(${kinds}::text[]))
       AND (${keyPrefix}::text IS NULL OR starts_with(e.key, ${keyPrefix}::text))
       AND (${afterKey}::text IS NULL OR e.key > ${afterKey}::text)
       AND (${beforeKey}::text IS NULL OR e.key < ${beforeKey}::text)
       AND (${excludeKinds}::text[] IS NULL OR NOT (e.kind = ANY(${excludeKinds}::text[])))
       AND ${visible('e', visibleScopes)}
     ORDER BY e.key ${raw(filter.backwards ? 'DESC' : 'ASC')}
     LIMIT ${filter.limit}`,
  );
  const complete = columns ? rows.map(withNeutralColumns) : rows;
  return filter.backwards ? complete.reverse() : complete;
}

export async function countEntities(
  q: Queryable,
  namespace: string,
  filter: Pick<EntityListFilter, 'kinds' | 'keyPrefix' | 'excludeKinds'>,
  visibleScopes: string[] | null,
): Promise<number> {
  const kindsParam = param(filter.kinds ?? null);
  const keyPrefixParam = param(filter.keyPrefix ?? null);
  const excludeKindsParam = param(filter.excludeKinds ?? null);
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* countEntities */
     SELECT count(*)::int AS n FROM entities e
     WHERE e.namespace = ${namespace}
       AND (${kindsParam}::text[] IS NULL OR e.kind = ANY(${kindsParam}::text[]))
       AND (${keyPrefixParam}::text IS NULL OR starts_with(e.key, ${keyPrefixParam}::text))
       AND (${excludeKindsParam}::text[] IS NULL OR NOT (e.kind = ANY(${excludeKindsParam}::text[])))
       AND ${visible('e', visibleScopes)}`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Upserts one entity. Attributes merge shallowly (a JSON null removes a key); a change of
 * title or attributes closes the attribute version in force and opens one valid from
 * `validFrom`, so as-of reads see what was true then. Only an entity the writer can see is
 * updated; a key taken by a hidden one answers HIDDEN and changes nothing.
 */
export async function upsertEntity(
  q: Queryable,
  namespace: string,
  w: EntityWrite,
  visibleScopes: string[] | null,
  retried = false,
): Promise<EntityWriteStatus> {
  const existing = await run<{
    title: string;
    attributes: Record<string, unknown>;
    kind: string;
    placeholder: boolean;
    scopes: string[];
    sourcePath: string | null;
    confidence: number | null;
  }>(
    q,
    sql`/* lockEntityForUpsert */
     SELECT e.title, e.attributes, e.kind, e.placeholder, e.scopes, e.source_path AS "sourcePath", e.confidence
     FROM entities e WHERE e.namespace = ${namespace} AND e.key = ${w.key} AND ${visible('e', visibleScopes)} FOR UPDATE`,
  );
  const before = existing.rows[0];
  const status = await writeEntity(q, namespace, withTitle(w, before), before, visibleScopes);
  if (status) return status;
  // The insert lost to a concurrent first write: upsert again as an update of that row (with the
  // write as given, so an omitted title keeps that row's). Still not visible: a hidden row.
  return retried ? 'HIDDEN' : upsertEntity(q, namespace, w, visibleScopes, true);
}

/** The write with its title settled: an omitted title keeps what is stored. */
export function withTitle<W extends Pick<EntityWrite, 'key' | 'title'>>(
  w: W,
  before: Pick<EntityBefore, 'title' | 'placeholder'> | null | undefined,
): W & { title: string } {
  return { ...w, title: w.title ?? (before && !before.placeholder ? before.title : w.key) };
}

async function writeEntity(
  q: Queryable,
  namespace: string,
  w: EntityWrite & { title: string },
  before: EntityBefore | undefined,
  visibleScopes: string[] | null,
): Promise<EntityWriteStatus | null> {
  const merged = mergeAttributes(before?.attributes ?? {}, w.attributes);
  if (!before) {
    // FOR UPDATE cannot lock a row that does not exist yet: a concurrent first write of the
    // same key makes this insert a no-op, and the upsert then retries as an update. A key
    // that is still not visible then belongs to a hidden row.
    const inserted = await run<WrittenEntity>(
      q,
      sql`/* insertEntity */
       INSERT INTO entities (namespace, key, kind, title, attributes, scopes, visibility, source_path, confidence,
                             origin, pii, pii_categories, last_seen)
       VALUES (${namespace}, ${w.key}, ${w.kind}, ${w.title}, ${merged}::jsonb, ${w.scopes}::text[], ${w.visibility}::text[], ${w.sourcePath}, ${w.confidence}, ${w.origin}, ${w.pii}, ${w.piiCategories}::text[], ${w.validFrom}::timestamptz)
       ON CONFLICT (namespace, key) DO NOTHING
       RETURNING key, kind, content_hash IS NOT NULL AS document`,
    );
    if (inserted.rows.length === 0) return null;
    await noteChanges(q, entityChanges(namespace, inserted.rows));
    await insertVersion(q, namespace, w, merged);
    return 'CREATED';
  }
  const { changed, scopes } = entityChange(before, w, merged);
  if (!changed) return 'UNCHANGED';
  const updated = await run<WrittenEntity>(
    q,
    sql`/* updateEntity */
     UPDATE entities SET kind = ${w.kind}, title = ${w.title}, attributes = ${merged}::jsonb, scopes = ${scopes}::text[],
       visibility = (SELECT coalesce(array_agg(DISTINCT v ORDER BY v), '{}') FROM unnest(visibility || ${w.visibility}::text[]) v),
       source_path = coalesce(${w.sourcePath}, source_path), confidence = coalesce(${w.confidence}, confidence),
       placeholder = false, pii = pii OR ${w.pii}, pii_categories = (SELECT coalesce(array_agg(DISTINCT c ORDER BY c), '{}') FROM unnest(pii_categories || ${w.piiCategories}::text[]) c),
       last_seen = greatest(last_seen, ${w.validFrom}::timestamptz), updated_at = now()
     WHERE namespace = ${namespace} AND key = ${w.key} AND ${visible('entities', visibleScopes)}
     RETURNING key, kind, content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, updated.rows));
  if (entityChange(before, w, merged).versioned) await insertVersion(q, namespace, w, merged);
  return 'UPDATED';
}

/** The fields of a stored entity an upsert compares against. */
export interface EntityBefore {
  title: string;
  attributes: Record<string, unknown>;
  kind: string;
  placeholder: boolean;
  scopes: string[];
  sourcePath: string | null;
  confidence: number | null;
}

/**
 * What an upsert of an existing entity changes (the one rule for the one-row and the batch
 * path): whether anything changed, whether a new attribute version opens, the unioned scopes.
 */
export function entityChange(
  before: EntityBefore,
  w: Pick<EntityWrite, 'kind' | 'scopes' | 'sourcePath' | 'confidence'> & { title: string },
  merged: Record<string, unknown>,
): { changed: boolean; versioned: boolean; scopes: string[] } {
  const scopes = unionSorted(before.scopes, w.scopes);
  const versioned = before.title !== w.title || !sameJson(before.attributes, merged);
  const changed =
    before.placeholder ||
    versioned ||
    before.kind !== w.kind ||
    before.scopes.length !== scopes.length ||
    (w.sourcePath !== null && w.sourcePath !== before.sourcePath) ||
    (w.confidence !== null && w.confidence !== before.confidence);
  return { changed, versioned, scopes };
}

async function insertVersion(
  q: Queryable,
  namespace: string,
  w: EntityWrite,
  attributes: Record<string, unknown>,
) {
  // Close the version in force at validFrom, then open the new one until the next known version.
  const nsParam = param(namespace);
  const keyParam = param(w.key);
  const validFromParam = param(w.validFrom);
  await run(
    q,
    sql`/* openAttributeVersion */
     WITH closed AS (
       UPDATE entity_versions SET valid_to = ${validFromParam}::timestamptz
       WHERE namespace = ${nsParam} AND key = ${keyParam} AND valid_from < ${validFromParam}::timestamptz
         AND (valid_to IS NULL OR valid_to > ${validFromParam}::timestamptz)
       RETURNING valid_to
     )
     INSERT INTO entity_versions (namespace, key, valid_from, valid_to, title, attributes, observation_id)
     VALUES (${nsParam}, ${keyParam}, ${validFromParam}::timestamptz,
             (SELECT min(valid_from) FROM entity_versions WHERE namespace = ${nsParam} AND key = ${keyParam} AND valid_from > ${validFromParam}::timestamptz),
             ${w.title}, ${attributes}::jsonb, ${w.observationId})
     ON CONFLICT (namespace, key, valid_from) DO UPDATE SET title = excluded.title, attributes = excluded.attributes,
       observation_id = coalesce(excluded.observation_id, entity_versions.observation_id)`,
  );
}

/**
 * Creates endpoints that facts name before their entity arrives; a later upsert fills them in.
 * Returns how many of `keys` name an entity the writer cannot see (the fact must not be
 * written then: it would attach to a hidden node).
 */
export async function ensurePlaceholders(
  q: Queryable,
  namespace: string,
  keys: string[],
  visibleScopes: string[] | null,
): Promise<number> {
  if (keys.length === 0) return 0;
  // The outer SELECT sees the table as it was before the insert, so keys inserted here are
  // excluded explicitly and only rows that were already there are checked.
  const nsParam = param(namespace);
  const keysParam = param(keys);
  const { rows } = await run<{ hidden: number; created: string[] }>(
    q,
    sql`/* ensurePlaceholderEntities */
     WITH inserted AS (
       INSERT INTO entities (namespace, key, kind, title, placeholder)
       SELECT ${nsParam}, k, 'entity', k, true FROM unnest(${keysParam}::text[]) AS k
       ON CONFLICT (namespace, key) DO NOTHING
       RETURNING key
     )
     SELECT count(*)::int AS hidden, (SELECT coalesce(array_agg(key), '{}') FROM inserted) AS created
     FROM entities e
     WHERE e.namespace = ${nsParam} AND e.key = ANY(${keysParam}::text[]) AND e.key NOT IN (SELECT key FROM inserted)
       AND NOT ${visible('e', visibleScopes)}`,
  );
  const created = rows[0]?.created ?? [];
  await noteChanges(q, changedIds(namespace, 'ENTITY', created));
  return rows[0]?.hidden ?? 0;
}

export function mergeAttributes(
  base: Record<string, unknown>,
  patch: Record<string, unknown> | null,
): Record<string, unknown> {
  if (!patch) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

export function unionSorted(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
