/**
 * The `recent` channel: the freshest timed chunks (an observation's indexed text, episodes)
 * and observations without indexed text (data only) of the requested namespaces, as of
 * `asOf`, relevant to the requested scopes (their relevance scopes intersect, or they have
 * none). One bounded statement: per namespace and kind a backward scan of the
 * (namespace, occurred_at) index — ordered by that key alone, so the plan is the index scan
 * whatever the table statistics — merged by time (ties broken here, on ≤ 2 × 64 rows).
 */
import type { Queryable } from '../../db/database.js';
import { visibleTo } from '../../store/visibility.js';
import { CHANNEL_LIMIT, relevantTo } from './facts.js';

export interface RecentChannelInput {
  namespaces: string[];
  scopes: string[] | null;
  asOf: Date;
  limit: number;
}

export interface RecentHit {
  kind: 'observation' | 'chunk';
  namespace: string;
  /** Observation id, or chunk id as text. */
  id: string;
  occurredAt: Date;
}

export async function recentChannel(
  q: Queryable,
  input: RecentChannelInput,
  visibleScopes: string[] | null,
): Promise<RecentHit[]> {
  const limit = Math.min(CHANNEL_LIMIT, Math.max(1, input.limit));
  const { rows } = await q.query<RecentHit>(
    `/* contextRecentChannel */
     SELECT r.kind, r.namespace, r.id, r."occurredAt" FROM (
       SELECT 'observation' AS kind, x.namespace, x.observation_id AS id, x.occurred_at AS "occurredAt"
       FROM unnest($1::text[]) AS n(ns)
       CROSS JOIN LATERAL (
         SELECT o.namespace, o.observation_id, o.occurred_at FROM observations o
         -- An observation with text comes back as its chunks (second branch); data-only ones
         -- are found through observations_data_only_idx (migration 007).
         WHERE o.namespace = n.ns AND o.content IS NULL AND o.data IS NOT NULL
           AND o.occurred_at <= $2::timestamptz AND o.status <> 'REDACTED'
           AND ${visibleTo('o', '$3')} AND ${relevantTo('o', '$4')}
         ORDER BY o.occurred_at DESC LIMIT $5
       ) x
       UNION ALL
       SELECT 'chunk', y.namespace, y.chunk_id::text, y.occurred_at
       FROM unnest($1::text[]) AS n(ns)
       CROSS JOIN LATERAL (
         SELECT c.namespace, c.chunk_id, c.occurred_at FROM chunks c
         WHERE c.namespace = n.ns AND c.occurred_at IS NOT NULL AND c.occurred_at <= $2::timestamptz
           AND ${visibleTo('c', '$3')} AND ${relevantTo('c', '$4')}
         ORDER BY c.occurred_at DESC LIMIT $5
       ) y
     ) r
     ORDER BY r."occurredAt" DESC, r.kind, r.id
     LIMIT $5`,
    [input.namespaces, input.asOf, visibleScopes, input.scopes, limit],
  );
  return rows.map((r) => ({ ...r, occurredAt: new Date(r.occurredAt) }));
}
