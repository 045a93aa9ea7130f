import type { Queryable } from '../../../db/database.js';
import { ENTITY_COLUMNS, type EntityRow } from '../../../kernel/store/entity-store.js';
import { FACT_COLUMNS, type FactRow } from '../../../kernel/store/fact-store.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';

/** SQL behind the router's handlers: entity resolution from hints and facts that no longer hold. */

export type EntityMatch = EntityRow & { hint: string; matchedBy: 'KEY' | 'TITLE' | 'ALIAS' | 'TRIGRAM' };

/**
 * Entities named by `hints`, best match per hint: exact key, then title or alias
 * (case-insensitive), then trigram similarity on the title (≥ `minSimilarity`). One statement.
 */
export async function resolveEntityHints(
  q: Queryable,
  namespace: string,
  hints: string[],
  visibleScopes: string[] | null,
  minSimilarity = 0.35,
): Promise<EntityMatch[]> {
  if (hints.length === 0) return [];
  const { rows } = await run<EntityRow & { hint: string; matchedBy: EntityMatch['matchedBy'] }>(
    q,
    sql`/* resolveEntityHints */
     SELECT DISTINCT ON (h.ord) h.hint, m."matchedBy", ${raw(ENTITY_COLUMNS)}
     FROM unnest(${hints}::text[]) WITH ORDINALITY AS h(hint, ord)
     CROSS JOIN LATERAL (
       SELECT e.namespace, e.key,
         CASE WHEN e.key = h.hint OR lower(e.key) = lower(h.hint) THEN 'KEY'
              WHEN lower(e.title) = lower(h.hint) THEN 'TITLE'
              WHEN lower(h.hint) = ANY(SELECT lower(a) FROM unnest(e.aliases) a) THEN 'ALIAS'
              ELSE 'TRIGRAM' END AS "matchedBy",
         CASE WHEN e.key = h.hint OR lower(e.key) = lower(h.hint) THEN 3
              WHEN lower(e.title) = lower(h.hint) THEN 2
              WHEN lower(h.hint) = ANY(SELECT lower(a) FROM unnest(e.aliases) a) THEN 2
              ELSE 0 END + similarity(e.title, h.hint) AS rank
       FROM entities e
       WHERE e.namespace = ${namespace} AND ${visible('e', visibleScopes)} AND NOT e.placeholder
         AND (e.key = h.hint OR lower(e.key) = lower(h.hint) OR lower(e.title) = lower(h.hint)
              OR e.aliases && ARRAY[h.hint] OR lower(h.hint) = ANY(SELECT lower(a) FROM unnest(e.aliases) a)
              OR e.title % h.hint AND similarity(e.title, h.hint) >= ${minSimilarity})
       ORDER BY rank DESC, e.key
       LIMIT 1
     ) m
     JOIN entities e ON e.namespace = m.namespace AND e.key = m.key
     ORDER BY h.ord`,
  );
  return rows;
}

/** Titles and aliases of entities resembling any word run of the query: the LLM's candidates. */
export async function candidateEntityNames(
  q: Queryable,
  namespace: string,
  hints: string[],
  visibleScopes: string[] | null,
  limit = 20,
): Promise<string[]> {
  if (hints.length === 0) return [];
  const { rows } = await run<{ title: string }>(
    q,
    sql`/* candidateEntityNames */
     SELECT DISTINCT e.title
     FROM entities e, unnest(${hints}::text[]) AS h(hint)
     WHERE e.namespace = ${namespace} AND ${visible('e', visibleScopes)} AND NOT e.placeholder
       AND (lower(e.title) = lower(h.hint) OR e.title % h.hint OR lower(h.hint) = ANY(SELECT lower(a) FROM unnest(e.aliases) a))
     LIMIT ${limit}`,
  );
  return rows.map((r) => r.title);
}

/**
 * Facts about `keys` (as subject or object) that were true before and no longer are at `asOf`:
 * superseded, or closed (valid_to ≤ asOf). Newest first.
 */
export async function invalidatedFactsOf(
  q: Queryable,
  namespace: string,
  keys: string[],
  asOf: Date,
  visibleScopes: string[] | null,
  limit: number,
): Promise<FactRow[]> {
  if (keys.length === 0) return [];
  const keysParam = param(keys);
  const atParam = param(asOf);
  const { rows } = await run<FactRow>(
    q,
    sql`/* invalidatedFactsOf */
     SELECT ${raw(FACT_COLUMNS)}
     FROM facts f
     WHERE f.namespace = ${namespace} AND (f.subject = ANY(${keysParam}::text[]) OR f.object = ANY(${keysParam}::text[]))
       AND ${factVisible('f', visibleScopes)}
       AND f.valid_from <= ${atParam}::timestamptz
       AND (f.status = 'SUPERSEDED' OR (f.status = 'ACTIVE' AND f.valid_to IS NOT NULL AND f.valid_to <= ${atParam}::timestamptz))
     ORDER BY coalesce(f.valid_to, f.recorded_at) DESC, f.fact_id
     LIMIT ${limit}`,
  );
  return rows;
}

export interface AttributeVersion {
  attributes: Record<string, unknown>;
  validFrom: Date;
  validTo: Date | null;
  observationId: string | null;
}

/** The attribute version of one entity in force at `asOf` (the open one when null), with its source. */
export async function attributeVersionAt(
  q: Queryable,
  namespace: string,
  key: string,
  asOf: Date | null,
  visibleScopes: string[] | null,
): Promise<AttributeVersion | null> {
  const atParam = param(asOf);
  const { rows } = await run<AttributeVersion>(
    q,
    sql`/* attributeVersionAt */
     SELECT v.attributes, v.valid_from AS "validFrom", v.valid_to AS "validTo", v.observation_id AS "observationId"
     FROM entities e
     JOIN entity_versions v ON v.namespace = e.namespace AND v.key = e.key
     WHERE e.namespace = ${namespace} AND e.key = ${key} AND ${visible('e', visibleScopes)}
       AND CASE WHEN ${atParam}::timestamptz IS NULL THEN v.valid_to IS NULL
                ELSE v.valid_from <= ${atParam}::timestamptz AND (v.valid_to IS NULL OR v.valid_to > ${atParam}::timestamptz) END
     ORDER BY v.valid_from DESC LIMIT 1`,
  );
  return rows[0] ?? null;
}
