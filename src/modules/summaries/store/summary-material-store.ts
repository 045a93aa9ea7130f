import type { Queryable } from '../../../db/database.js';
import { param, run, sql } from '../../../kernel/store/sql.js';
import { factHeld, factVisible, validAt, visible } from '../../../kernel/store/visibility.js';
import type { SummaryMaterial } from '../summary-material.js';

/** Facts per entity and side, and notes per entity, a summary reads at most. */
export const FACTS_PER_SIDE = 40;
export const NOTES_PER_ENTITY = 8;

/** Kinds the gateway writes for its own bookkeeping: they get no summary. */
const NOT_SUMMARISED_KINDS = ['observation', 'episode', 'session'];

interface MaterialRow {
  entities: SummaryMaterial['entity'][];
  facts: SummaryMaterial['facts'];
  notes: SummaryMaterial['notes'];
}

/**
 * What the summaries of `keys` rest on at `asOf`, in one statement: each entity with its
 * attributes in force then, its facts valid then (neither superseded by then, retracted nor
 * without evidence; both endpoints visible), and the latest observations that mention it and had
 * occurred by then (redacted ones never). `visibleScopes` null reads every row with its
 * visibility arrays (the refresher, which builds one summary per visibility class); a reader's
 * scopes read what that reader may see.
 */
export async function summaryMaterial(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  asOf: Date,
  visibleScopes: string[] | null,
): Promise<SummaryMaterial[]> {
  if (keys.length === 0) return [];
  const at = param(asOf);
  const scopes = param(visibleScopes);
  // What memory held at an earlier instant (a read for a past asOf); a build for now holds everything.
  const heldAt = asOf.getTime() < Date.now() - 1000 ? at : null;
  const held = sql`${validAt('f', at, 'served')} AND ${factHeld('f', heldAt)} AND ${factVisible('f', scopes)}`;
  const { rows } = await run<MaterialRow>(
    q,
    sql`/* summaryMaterial */
     WITH ents AS MATERIALIZED (
       SELECT e.namespace, e.key, e.kind, e.title, e.visibility, e.scopes, v.attributes, e.pii,
              e.pii_categories AS "piiCategories"
       FROM entities e
       LEFT JOIN LATERAL (
         SELECT ev.attributes FROM entity_versions ev
         WHERE ev.namespace = e.namespace AND ev.key = e.key AND ev.valid_from <= ${at}::timestamptz
           AND (ev.valid_to IS NULL OR ev.valid_to > ${at}::timestamptz)
         ORDER BY ev.valid_from DESC LIMIT 1
       ) v ON true
       WHERE e.namespace = ${namespace} AND e.key = ANY(${[...keys]}::text[]) AND NOT e.placeholder
         AND NOT (e.kind = ANY(${NOT_SUMMARISED_KINDS}::text[])) AND ${visible('e', scopes)}
     ), fact_rows AS (
       SELECT x.fact_id AS "factId", p.key AS entity, x.predicate, x.subject = p.key AS outgoing,
              o.key AS "otherKey", o.title AS "otherTitle", x.valid_from AS "validFrom", x.conflict,
              x.evidence, x.visibility, o.visibility AS "otherVisibility", o.pii AS "otherPii",
              o.pii_categories AS "otherPiiCategories"
       FROM ents p
       CROSS JOIN LATERAL (
         (SELECT f.* FROM facts f WHERE f.namespace = p.namespace AND f.subject = p.key AND ${held}
          ORDER BY f.valid_from DESC, f.fact_id LIMIT ${FACTS_PER_SIDE})
         UNION ALL
         (SELECT f.* FROM facts f WHERE f.namespace = p.namespace AND f.object = p.key AND f.subject <> p.key
            AND ${held}
          ORDER BY f.valid_from DESC, f.fact_id LIMIT ${FACTS_PER_SIDE})
       ) x
       JOIN entities o ON o.namespace = x.namespace AND o.key = CASE WHEN x.subject = p.key THEN x.object ELSE x.subject END
       WHERE o.kind <> 'observation'
     ), note_rows AS (
       SELECT n.observation_id AS "observationId", p.key AS entity, n.content, n.occurred_at AS "occurredAt",
              n.actor_id AS actor, n.visibility, n.pii, n.pii_categories AS "piiCategories"
       FROM ents p
       CROSS JOIN LATERAL (
         SELECT ob.observation_id, ob.content, ob.occurred_at, ob.actor_id, ob.visibility, ob.pii, ob.pii_categories
         FROM mentions m
         JOIN observations ob ON ob.namespace = m.namespace AND ob.observation_id = m.observation_id
         WHERE m.namespace = p.namespace AND m.entity_key = p.key AND ob.status <> 'REDACTED'
           AND coalesce(ob.content, '') <> '' AND ob.occurred_at <= ${at}::timestamptz AND ${visible('ob', scopes)}
         ORDER BY ob.occurred_at DESC, ob.arrival DESC
         LIMIT ${NOTES_PER_ENTITY}
       ) n
     )
     SELECT (SELECT coalesce(json_agg(ents), '[]'::json) FROM ents) AS entities,
            (SELECT coalesce(json_agg(fact_rows), '[]'::json) FROM fact_rows) AS facts,
            (SELECT coalesce(json_agg(note_rows), '[]'::json) FROM note_rows) AS notes`,
  );
  const row = rows[0] ?? { entities: [], facts: [], notes: [] };
  const facts = groupBy(row.facts, (f) => f.entity);
  const notes = groupBy(row.notes, (n) => n.entity);
  return row.entities.map((entity) => ({
    entity,
    facts: facts.get(entity.key) ?? [],
    notes: notes.get(entity.key) ?? [],
  }));
}

function groupBy<T>(rows: readonly T[], keyOf: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const list = out.get(keyOf(row));
    if (list) list.push(row);
    else out.set(keyOf(row), [row]);
  }
  return out;
}
