import type { Queryable } from '../../../db/database.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';
import { param, run, sql } from '../../../kernel/store/sql.js';

/**
 * Counts over a time window — what came up, not what was said: observation kinds (topics),
 * entities by the observations that mention them, fact predicates. No content column is read.
 * The window is half-open [since, until) on observations.occurred_at (facts: valid_from).
 */

export interface FacetCountRow {
  key: string;
  label: string;
  count: number;
}

export interface FacetWindow {
  since: Date | null;
  until: Date | null;
  limit: number;
}

export async function topicFacets(
  q: Queryable,
  namespace: string,
  w: FacetWindow,
  visibleScopes: string[] | null,
): Promise<FacetCountRow[]> {
  const sinceParam = param(w.since);
  const untilParam = param(w.until);
  const { rows } = await run<FacetCountRow>(
    q,
    sql`/* topicFacets */
     SELECT o.kind AS key, o.kind AS label, count(*)::int AS count
     FROM observations o
     WHERE o.namespace = ${namespace} AND ${visible('o', visibleScopes)} AND o.status <> 'REDACTED'
       AND (${sinceParam}::timestamptz IS NULL OR o.occurred_at >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR o.occurred_at < ${untilParam}::timestamptz)
     GROUP BY o.kind ORDER BY count(*) DESC, o.kind LIMIT ${w.limit}`,
  );
  return rows.map(toCount);
}

export async function entityFacets(
  q: Queryable,
  namespace: string,
  w: FacetWindow,
  visibleScopes: string[] | null,
): Promise<FacetCountRow[]> {
  const sinceParam = param(w.since);
  const untilParam = param(w.until);
  const scopesParam = param(visibleScopes);
  const { rows } = await run<FacetCountRow>(
    q,
    sql`/* entityFacets */
     SELECT e.key, e.title AS label, count(DISTINCT m.observation_id)::int AS count
     FROM mentions m
     JOIN observations o ON o.namespace = m.namespace AND o.observation_id = m.observation_id
     JOIN entities e ON e.namespace = m.namespace AND e.key = m.entity_key
     WHERE m.namespace = ${namespace} AND ${visible('o', scopesParam)} AND ${visible('e', scopesParam)}
       AND o.status <> 'REDACTED'
       AND (${sinceParam}::timestamptz IS NULL OR o.occurred_at >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR o.occurred_at < ${untilParam}::timestamptz)
     GROUP BY e.key, e.title ORDER BY count(DISTINCT m.observation_id) DESC, e.key LIMIT ${w.limit}`,
  );
  return rows.map(toCount);
}

export async function predicateFacets(
  q: Queryable,
  namespace: string,
  w: FacetWindow,
  visibleScopes: string[] | null,
): Promise<FacetCountRow[]> {
  const sinceParam = param(w.since);
  const untilParam = param(w.until);
  const { rows } = await run<FacetCountRow>(
    q,
    sql`/* predicateFacets */
     SELECT f.predicate AS key, f.predicate AS label, count(*)::int AS count
     FROM facts f
     WHERE f.namespace = ${namespace} AND ${factVisible('f', visibleScopes)} AND f.status IN ('ACTIVE', 'SUPERSEDED')
       AND (${sinceParam}::timestamptz IS NULL OR f.valid_from >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR f.valid_from < ${untilParam}::timestamptz)
     GROUP BY f.predicate ORDER BY count(*) DESC, f.predicate LIMIT ${w.limit}`,
  );
  return rows.map(toCount);
}

function toCount(r: FacetCountRow): FacetCountRow {
  return { key: r.key, label: r.label, count: Number(r.count) };
}
