import type { Queryable } from '../../../db/database.js';
import { entityChanges, noteChanges, type WrittenEntity } from '../../../kernel/change-notice.js';
import { run, sql } from '../../../kernel/store/sql.js';
import { visible } from '../../../kernel/store/visibility.js';

/** A name read from text, with the keys it could already have. */
export interface NameProbe {
  name: string;
  /** Lower-cased in JS (PostgreSQL's lower() folds only ASCII under the C locale). */
  lower: string;
  /** Keys the name may be: itself, and the placeholder keys an earlier extraction gave it. */
  keys: string[];
}

export interface GazetteerHit {
  name: string;
  key: string;
  kind: string;
  placeholder: boolean;
  /** How the name matched: key, alias or title. */
  via: 'key' | 'alias' | 'title';
}

/** Entity kinds the gateway writes for its own bookkeeping: never what a name in text means. */
const NOT_NAMED_KINDS = ['observation', 'episode', 'document', 'session'];

/**
 * Every visible entity a name may denote, in one statement of index probes: keys by primary
 * key, aliases through their GIN index, titles through the first-word index (then compared
 * whole). The caller picks the best hit per name.
 */
export async function findNamedEntities(
  q: Queryable,
  namespace: string,
  probes: readonly NameProbe[],
  visibleScopes: string[] | null,
  /** Attributes the packs' alias templates name alone (`aliases: ['name']`): a value is a name. */
  aliasAttributes: readonly string[] = [],
): Promise<GazetteerHit[]> {
  if (probes.length === 0) return [];
  const payload = JSON.stringify(
    probes.map((p) => ({ name: p.name, lower: p.lower, first: p.lower.split(' ')[0] ?? '', keys: p.keys })),
  );
  const { rows } = await run<GazetteerHit>(
    q,
    sql`/* findNamedEntities */
     WITH n AS MATERIALIZED (
       SELECT x.name, x.lower, x.first, x.keys
       FROM jsonb_to_recordset(${payload}::jsonb) AS x(name text, lower text, first text, keys text[])
     ), hits AS (
       SELECT n.name, e.key, e.kind, e.placeholder, 'key' AS via, e.visibility
       FROM n JOIN entities e ON e.namespace = ${namespace} AND e.key = ANY(n.keys)
       UNION ALL
       SELECT n.name, e.key, e.kind, e.placeholder, 'alias', e.visibility
       FROM n JOIN entities e ON e.namespace = ${namespace} AND e.aliases && ARRAY[n.name, n.lower]
       UNION ALL
       SELECT n.name, e.key, e.kind, e.placeholder, 'alias', e.visibility
       FROM n CROSS JOIN unnest(${[...aliasAttributes]}::text[]) AS a(attr)
       JOIN entities e ON e.namespace = ${namespace} AND e.attributes @> jsonb_build_object(a.attr, n.name)
       UNION ALL
       SELECT n.name, e.key, e.kind, e.placeholder, 'title', e.visibility
       FROM n JOIN entities e ON e.namespace = ${namespace}
         AND lower(split_part(e.title, ' ', 1)) = n.first
         AND (e.title = n.name OR lower(e.title) = n.lower)
     )
     SELECT DISTINCT h.name, h.key, h.kind, h.placeholder, h.via FROM hits h
     WHERE NOT (h.kind = ANY(${NOT_NAMED_KINDS}::text[])) AND ${visible('h', visibleScopes)}`,
  );
  return rows;
}

/** An entity known so far only by the name a rule or a model read. */
export interface PlaceholderWrite {
  key: string;
  kind: string;
  title: string;
  scopes: string[];
  visibility: string[];
  observationId: string | null;
}

/**
 * Creates the entities names resolved to but that do not exist yet, as placeholders of the
 * extractor's kind titled with the name; an entity that exists (even hidden) is left alone —
 * the fact write then reports it. One statement.
 */
export async function insertNamedPlaceholders(
  q: Queryable,
  namespace: string,
  rows: readonly PlaceholderWrite[],
): Promise<void> {
  if (rows.length === 0) return;
  const { rows: created } = await run<WrittenEntity>(
    q,
    sql`/* insertNamedPlaceholders */
     INSERT INTO entities (namespace, key, kind, title, scopes, visibility, placeholder)
     SELECT DISTINCT ON (p.key) ${namespace}, p.key, p.kind, p.title, coalesce(p.scopes, '{}'),
            coalesce(p.visibility, '{}'), true
     FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
       AS p(key text, kind text, title text, scopes text[], visibility text[])
     ORDER BY p.key
     ON CONFLICT (namespace, key) DO NOTHING
     RETURNING key, kind, content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, created));
}

/**
 * Attribute values read from text fill in attributes the entity does not have yet: a value a
 * writer asserted is never overwritten by one a rule or a model read. One statement.
 */
export async function fillMissingAttributes(
  q: Queryable,
  namespace: string,
  rows: readonly { key: string; attribute: string; value: string }[],
  visibleScopes: string[] | null,
): Promise<number> {
  if (rows.length === 0) return 0;
  const { rows: filled } = await run<WrittenEntity>(
    q,
    sql`/* fillMissingAttributes */
     WITH a AS (
       SELECT x.key, jsonb_object_agg(x.attribute, x.value) AS attrs
       FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(key text, attribute text, value text)
       GROUP BY x.key
     )
     UPDATE entities e SET attributes = a.attrs || coalesce(e.attributes, '{}'::jsonb)
     FROM a
     WHERE e.namespace = ${namespace} AND e.key = a.key AND ${visible('e', visibleScopes)}
       AND NOT (coalesce(e.attributes, '{}'::jsonb) @> a.attrs)
       AND EXISTS (SELECT 1 FROM jsonb_object_keys(a.attrs) k WHERE NOT coalesce(e.attributes, '{}'::jsonb) ? k)
     RETURNING e.key, e.kind, e.content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, filled));
  return filled.length;
}
