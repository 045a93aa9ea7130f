import type { Queryable } from '../../../db/database.js';
import { factVisibleTo, visibleTo } from '../../../kernel/store/visibility.js';

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
  const { rows } = await q.query<FacetCountRow>(
    `/* topicFacets */
     SELECT o.kind AS key, o.kind AS label, count(*)::int AS count
     FROM observations o
     WHERE o.namespace = $1 AND ${visibleTo('o', '$4')} AND o.status <> 'REDACTED'
       AND ($2::timestamptz IS NULL OR o.occurred_at >= $2::timestamptz)
       AND ($3::timestamptz IS NULL OR o.occurred_at < $3::timestamptz)
     GROUP BY o.kind ORDER BY count(*) DESC, o.kind LIMIT $5`,
    [namespace, w.since, w.until, visibleScopes, w.limit],
  );
  return rows.map(toCount);
}

export async function entityFacets(
  q: Queryable,
  namespace: string,
  w: FacetWindow,
  visibleScopes: string[] | null,
): Promise<FacetCountRow[]> {
  const { rows } = await q.query<FacetCountRow>(
    `/* entityFacets */
     SELECT e.key, e.title AS label, count(DISTINCT m.observation_id)::int AS count
     FROM mentions m
     JOIN observations o ON o.namespace = m.namespace AND o.observation_id = m.observation_id
     JOIN entities e ON e.namespace = m.namespace AND e.key = m.entity_key
     WHERE m.namespace = $1 AND ${visibleTo('o', '$4')} AND ${visibleTo('e', '$4')}
       AND o.status <> 'REDACTED'
       AND ($2::timestamptz IS NULL OR o.occurred_at >= $2::timestamptz)
       AND ($3::timestamptz IS NULL OR o.occurred_at < $3::timestamptz)
     GROUP BY e.key, e.title ORDER BY count(DISTINCT m.observation_id) DESC, e.key LIMIT $5`,
    [namespace, w.since, w.until, visibleScopes, w.limit],
  );
  return rows.map(toCount);
}

export async function predicateFacets(
  q: Queryable,
  namespace: string,
  w: FacetWindow,
  visibleScopes: string[] | null,
): Promise<FacetCountRow[]> {
  const { rows } = await q.query<FacetCountRow>(
    `/* predicateFacets */
     SELECT f.predicate AS key, f.predicate AS label, count(*)::int AS count
     FROM facts f
     WHERE f.namespace = $1 AND ${factVisibleTo('f', '$4')} AND f.status IN ('ACTIVE', 'SUPERSEDED')
       AND ($2::timestamptz IS NULL OR f.valid_from >= $2::timestamptz)
       AND ($3::timestamptz IS NULL OR f.valid_from < $3::timestamptz)
     GROUP BY f.predicate ORDER BY count(*) DESC, f.predicate LIMIT $5`,
    [namespace, w.since, w.until, visibleScopes, w.limit],
  );
  return rows.map(toCount);
}

function toCount(r: FacetCountRow): FacetCountRow {
  return { key: r.key, label: r.label, count: Number(r.count) };
}
