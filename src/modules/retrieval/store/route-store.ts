import type { Queryable } from '../../../db/database.js';
import { ENTITY_COLUMNS, type EntityRow } from '../../../kernel/store/entity-store.js';
import { FACT_COLUMNS, type FactRow } from '../../../kernel/store/fact-store.js';
import { factVisibleTo, visibleTo } from '../../../kernel/store/visibility.js';

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
  const { rows } = await q.query<EntityRow & { hint: string; matchedBy: EntityMatch['matchedBy'] }>(
    `/* resolveEntityHints */
     SELECT DISTINCT ON (h.ord) h.hint, m."matchedBy", ${ENTITY_COLUMNS}
     FROM unnest($2::text[]) WITH ORDINALITY AS h(hint, ord)
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
       WHERE e.namespace = $1 AND ${visibleTo('e', '$3')} AND NOT e.placeholder
         AND (e.key = h.hint OR lower(e.key) = lower(h.hint) OR lower(e.title) = lower(h.hint)
              OR e.aliases && ARRAY[h.hint] OR lower(h.hint) = ANY(SELECT lower(a) FROM unnest(e.aliases) a)
              OR e.title % h.hint AND similarity(e.title, h.hint) >= $4)
       ORDER BY rank DESC, e.key
       LIMIT 1
     ) m
     JOIN entities e ON e.namespace = m.namespace AND e.key = m.key
     ORDER BY h.ord`,
    [namespace, hints, visibleScopes, minSimilarity],
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
  const { rows } = await q.query<{ title: string }>(
    `/* candidateEntityNames */
     SELECT DISTINCT e.title
     FROM entities e, unnest($2::text[]) AS h(hint)
     WHERE e.namespace = $1 AND ${visibleTo('e', '$3')} AND NOT e.placeholder
       AND (lower(e.title) = lower(h.hint) OR e.title % h.hint OR lower(h.hint) = ANY(SELECT lower(a) FROM unnest(e.aliases) a))
     LIMIT $4`,
    [namespace, hints, visibleScopes, limit],
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
  const { rows } = await q.query<FactRow>(
    `/* invalidatedFactsOf */
     SELECT ${FACT_COLUMNS}
     FROM facts f
     WHERE f.namespace = $1 AND (f.subject = ANY($2::text[]) OR f.object = ANY($2::text[]))
       AND ${factVisibleTo('f', '$4')}
       AND f.valid_from <= $3::timestamptz
       AND (f.status = 'SUPERSEDED' OR (f.status = 'ACTIVE' AND f.valid_to IS NOT NULL AND f.valid_to <= $3::timestamptz))
     ORDER BY coalesce(f.valid_to, f.recorded_at) DESC, f.fact_id
     LIMIT $5`,
    [namespace, keys, asOf, visibleScopes, limit],
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
  const { rows } = await q.query<AttributeVersion>(
    `/* attributeVersionAt */
     SELECT v.attributes, v.valid_from AS "validFrom", v.valid_to AS "validTo", v.observation_id AS "observationId"
     FROM entities e
     JOIN entity_versions v ON v.namespace = e.namespace AND v.key = e.key
     WHERE e.namespace = $1 AND e.key = $2 AND ${visibleTo('e', '$4')}
       AND CASE WHEN $3::timestamptz IS NULL THEN v.valid_to IS NULL
                ELSE v.valid_from <= $3::timestamptz AND (v.valid_to IS NULL OR v.valid_to > $3::timestamptz) END
     ORDER BY v.valid_from DESC LIMIT 1`,
    [namespace, key, asOf, visibleScopes],
  );
  return rows[0] ?? null;
}
