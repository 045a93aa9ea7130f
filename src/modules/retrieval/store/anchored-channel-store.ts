/**
 * The anchored channels' statements (facts, recent, graph): rows around seed entities, the
 * freshest timed items, and the neighbourhood walk. Each is one bounded statement with the
 * shared fragments of sql.ts — namespace, visibility (a fact only with both endpoints), valid at
 * `asOf`, relevance scopes — written once there and applied before anything is ranked.
 */
import type { Queryable } from '../../../db/database.js';
import { ENTITY_JSON, type EntityRow, entityRowOfJson } from '../../../kernel/store/entity-store.js';
import { FACT_JSON, type FactRow, factRowOfJson } from '../../../kernel/store/fact-store.js';
import { type SqlFragment, param, raw, run, sql } from '../../../kernel/store/sql.js';
import {
  chunkHeld,
  factHeld,
  factVisible,
  relevant,
  validAt,
  visible,
} from '../../../kernel/store/visibility.js';
import { DOCUMENT_LINK_ORIGIN } from '../../documents/index.js';

export interface FactSeedRow {
  namespace: string;
  key: string;
  /** 0 = asked for, 1 = entity of a top hit, 2 = multi-hop. */
  priority: number;
}

export interface FactsAroundInput {
  seeds: readonly FactSeedRow[];
  asOf: Date;
  /** What memory held at this instant (see visibility.ts, factHeld); null = now. */
  heldAt: Date | null;
  /** Relevance scopes; null = no relevance filter. */
  scopes: string[] | null;
  /** Facts per seed and side (subject/object). */
  perSeed: number;
  limit: number;
  /** Without seeds: the freshest facts of these namespaces (empty = none). */
  freshestIn: string[];
}

export interface FactsAroundRow {
  namespace: string;
  factId: string;
  blocked: boolean;
  conflictPartner: boolean;
}

/**
 * Facts around the seeds, newest first per seed and side through the (namespace,
 * subject|object, valid_from) indexes, ranked by seed priority; EVIDENCE_LOST facts come back
 * `blocked`, RETRACTED ones never; then the other side of each open conflict.
 */
export async function factsAroundSeeds(
  q: Queryable,
  input: FactsAroundInput,
  visibleScopes: string[] | null,
): Promise<FactsAroundRow[]> {
  // One fragment, its parameters bound once however often it is spliced in.
  const filters = sql`${validAt('f', input.asOf)} AND ${factHeld('f', input.heldAt)}
         AND ${factVisible('f', visibleScopes)} AND ${relevant('f', input.scopes)}`;
  const perSeed = param(Math.max(1, input.perSeed));
  // Document links are structure: around a seed they come after the facts that say something.
  const structural = sql`((f.attributes->>'origin') IS NOT DISTINCT FROM ${DOCUMENT_LINK_ORIGIN})`;
  const limit = param(input.limit);
  const { rows } = await run<FactsAroundRow>(
    q,
    sql`/* contextFactsChannel */
     WITH seeds AS (
       SELECT s.ns, s.key, s.prio
       FROM unnest(${input.seeds.map((s) => s.namespace)}::text[], ${input.seeds.map((s) => s.key)}::text[],
                   ${input.seeds.map((s) => s.priority)}::int[]) AS s(ns, key, prio)
     ), around AS (
       SELECT x.namespace, x.fact_id, x.status, x.valid_from, x.conflicts_with, x.structural, s.prio
       FROM seeds s
       CROSS JOIN LATERAL (
         (SELECT f.namespace, f.fact_id, f.status, f.valid_from, f.conflicts_with, ${structural} AS structural FROM facts f
          WHERE f.namespace = s.ns AND f.subject = s.key AND ${filters}
          ORDER BY ${structural}, f.valid_from DESC, f.fact_id DESC LIMIT ${perSeed})
         UNION ALL
         (SELECT f.namespace, f.fact_id, f.status, f.valid_from, f.conflicts_with, ${structural} FROM facts f
          WHERE f.namespace = s.ns AND f.object = s.key AND f.subject <> s.key AND ${filters}
          ORDER BY ${structural}, f.valid_from DESC, f.fact_id DESC LIMIT ${perSeed})
       ) x
     ), freshest AS (
       SELECT x.namespace, x.fact_id, x.status, x.valid_from, x.conflicts_with, x.structural, 3 AS prio
       FROM unnest(${input.freshestIn}::text[]) AS n(ns)
       CROSS JOIN LATERAL (
         SELECT f.namespace, f.fact_id, f.status, f.valid_from, f.conflicts_with, ${structural} AS structural FROM facts f
         WHERE f.namespace = n.ns AND ${filters}
         ORDER BY f.recorded_at DESC LIMIT ${limit}
       ) x
     ), found AS (
       SELECT DISTINCT ON (a.namespace, a.fact_id) a.*
       FROM (SELECT * FROM around UNION ALL SELECT * FROM freshest) a
       ORDER BY a.namespace, a.fact_id, a.prio
     ), ranked AS (
       SELECT found.*, row_number() OVER (ORDER BY prio, structural, valid_from DESC, fact_id) AS pos
       FROM found ORDER BY prio, structural, valid_from DESC, fact_id LIMIT ${limit}
     ), partners AS (
       SELECT DISTINCT ON (f.namespace, f.fact_id) f.namespace, f.fact_id, f.status,
              ${limit}::int + row_number() OVER (ORDER BY f.namespace, f.fact_id) AS pos
       FROM ranked r
       JOIN facts f ON f.namespace = r.namespace AND f.fact_id = ANY(r.conflicts_with)
       WHERE r.status <> 'EVIDENCE_LOST' AND f.status <> 'EVIDENCE_LOST' AND ${filters}
         AND NOT EXISTS (SELECT 1 FROM ranked r2 WHERE r2.namespace = f.namespace AND r2.fact_id = f.fact_id)
     )
     SELECT namespace, fact_id AS "factId", status = 'EVIDENCE_LOST' AS blocked, false AS "conflictPartner", pos
     FROM ranked
     UNION ALL
     SELECT namespace, fact_id, false, true, pos FROM partners
     ORDER BY pos`,
  );
  return rows.map((r) => ({
    namespace: r.namespace,
    factId: r.factId,
    blocked: r.blocked,
    conflictPartner: r.conflictPartner,
  }));
}

export interface RecentInput {
  namespaces: string[];
  scopes: string[] | null;
  asOf: Date;
  limit: number;
}

export interface RecentRow {
  kind: 'observation' | 'chunk';
  namespace: string;
  /** Observation id, or chunk id as text. */
  id: string;
  occurredAt: Date;
}

/**
 * The freshest timed chunks and data-only observations as of `asOf`: per namespace and kind a
 * backward scan of the (namespace, occurred_at) index, merged by time.
 */
export async function recentItems(
  q: Queryable,
  input: RecentInput,
  visibleScopes: string[] | null,
): Promise<RecentRow[]> {
  const namespaces = param(input.namespaces);
  const asOf = param(input.asOf);
  const limit = param(input.limit);
  const { rows } = await run<RecentRow>(
    q,
    sql`/* contextRecentChannel */
     SELECT r.kind, r.namespace, r.id, r."occurredAt" FROM (
       SELECT 'observation' AS kind, x.namespace, x.observation_id AS id, x.occurred_at AS "occurredAt"
       FROM unnest(${namespaces}::text[]) AS n(ns)
       CROSS JOIN LATERAL (
         SELECT o.namespace, o.observation_id, o.occurred_at FROM observations o
         -- An observation with text comes back as its chunks (second branch); data-only ones
         -- are found through observations_data_only_idx (migration 007).
         WHERE o.namespace = n.ns AND o.content IS NULL AND o.data IS NOT NULL
           AND o.occurred_at <= ${asOf}::timestamptz AND o.status <> 'REDACTED'
           AND ${visible('o', visibleScopes)} AND ${relevant('o', input.scopes)}
         ORDER BY o.occurred_at DESC, o.arrival DESC LIMIT ${limit}
       ) x
       UNION ALL
       SELECT 'chunk', y.namespace, y.chunk_id::text, y.occurred_at
       FROM unnest(${namespaces}::text[]) AS n(ns)
       CROSS JOIN LATERAL (
         SELECT c.namespace, c.chunk_id, c.occurred_at FROM chunks c
         WHERE c.namespace = n.ns AND c.occurred_at IS NOT NULL AND c.occurred_at <= ${asOf}::timestamptz
           AND ${visible('c', visibleScopes)} AND ${relevant('c', input.scopes)}
         ORDER BY c.occurred_at DESC LIMIT ${limit}
       ) y
     ) r
     ORDER BY r."occurredAt" DESC, r.kind, r.id
     LIMIT ${limit}`,
  );
  return rows.map((r) => ({ ...r, occurredAt: new Date(r.occurredAt) }));
}

export interface GraphWalkInput {
  seeds: readonly { namespace: string; key: string }[];
  visibleScopes: string[] | null;
  asOf: Date;
  /** What memory held at this instant: facts with evidence by then, chunks written by then. */
  heldAt: Date | null;
  /** 1 or 2. */
  hops: number;
  maxNodes: number;
  maxEdgesPerNode: number;
  /** Also read each neighbour's entity row and the row of the fact it was reached through. */
  withRows?: boolean;
}

export interface GraphWalkRow {
  namespace: string;
  key: string;
  distance: number;
  factId: string;
  throughKey: string | null;
  support: number;
  chunkId: number | null;
  /** With `withRows`: the neighbour's entity and the fact `factId` (both visible: walked). */
  entity?: EntityRow;
  fact?: FactRow;
}

/** One direction of a walk step: the newest ACTIVE facts at `asOf` leaving `w.key` that way. */
function walkStep(
  side: 'subject' | 'object',
  current: SqlFragment,
  scopes: SqlFragment,
  perNode: SqlFragment,
): SqlFragment {
  const from = side === 'subject' ? sql`f.subject` : sql`f.object`;
  const next = side === 'subject' ? sql`f.object` : sql`f.subject`;
  return sql`(SELECT f.fact_id, ${next} AS next FROM facts f
          WHERE f.namespace = w.namespace AND ${from} = w.key AND ${current} AND ${scopes}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${perNode})`;
}

/**
 * Neighbours of the seeds through current facts, breadth first, both directions, at most
 * `hops` steps, cycle-free, inside each seed's namespace; at most `maxEdgesPerNode` edges per
 * node and direction (newest first), so hubs stay cheap. Seeds are not neighbours; invisible
 * facts are not walked and invisible entities not returned.
 */
export async function graphNeighbours(q: Queryable, input: GraphWalkInput): Promise<GraphWalkRow[]> {
  const current = sql`${validAt('f', input.asOf, 'active')} AND ${factHeld('f', input.heldAt)}`;
  const factScopes = factVisible('f', input.visibleScopes);
  const perNode = sql`${input.maxEdgesPerNode}`;
  const { rows } = await run<{
    namespace: string;
    key: string;
    distance: unknown;
    factId: string;
    throughKey: string | null;
    support: unknown;
    chunkId: unknown;
    entity?: Record<string, unknown> | null;
    fact?: Record<string, unknown> | null;
  }>(
    q,
    sql`/* graphChannel */
     WITH RECURSIVE seeds AS (
       SELECT DISTINCT s.namespace, s.key
       FROM unnest(${input.seeds.map((s) => s.namespace)}::text[], ${input.seeds.map((s) => s.key)}::text[]) AS s(namespace, key)
     ), walk(namespace, key, distance, via, path) AS (
       SELECT s.namespace, s.key, 0, NULL::text, ARRAY[s.key] FROM seeds s
       UNION ALL
       SELECT w.namespace, e.next, w.distance + 1, e.fact_id, w.path || e.next
       FROM walk w CROSS JOIN LATERAL (
         ${walkStep('subject', current, factScopes, perNode)}
         UNION ALL
         ${walkStep('object', current, factScopes, perNode)}
       ) e
       WHERE w.distance < ${input.hops} AND NOT e.next = ANY(w.path)
     ), reached AS (
       SELECT w.namespace, w.key, min(w.distance) AS distance, count(*) AS support,
              (array_agg(w.via ORDER BY w.distance, w.via))[1] AS via,
              (array_agg(w.path[2] ORDER BY w.distance, w.via))[1] AS through
       FROM walk w
       WHERE w.distance > 0 AND NOT EXISTS (SELECT 1 FROM seeds s WHERE s.namespace = w.namespace AND s.key = w.key)
       GROUP BY w.namespace, w.key
     )
     SELECT r.namespace, r.key, r.distance, r.via AS "factId", r.support,
            CASE WHEN r.distance > 1 THEN r.through END AS "throughKey",
            (SELECT c.chunk_id FROM chunks c
             WHERE c.namespace = r.namespace AND c.node_key = r.key AND ${visible('c', input.visibleScopes)}
               AND ${chunkHeld('c', input.heldAt)}
             ORDER BY c.ord LIMIT 1) AS "chunkId"${raw(
               input.withRows
                 ? `, ${ENTITY_JSON} AS entity,
            (SELECT ${FACT_JSON} FROM facts f WHERE f.namespace = r.namespace AND f.fact_id = r.via) AS fact`
                 : '',
             )}
     FROM reached r
     JOIN entities e ON e.namespace = r.namespace AND e.key = r.key AND ${visible('e', input.visibleScopes)}
     ORDER BY r.distance, r.support DESC, r.namespace, r.key
     LIMIT ${input.maxNodes}`,
  );
  return rows.map((r) => ({
    namespace: r.namespace,
    key: r.key,
    distance: Number(r.distance),
    factId: r.factId,
    throughKey: r.throughKey,
    support: Number(r.support),
    chunkId: r.chunkId == null ? null : Number(r.chunkId),
    ...(r.entity ? { entity: entityRowOfJson(r.entity) } : {}),
    ...(r.fact ? { fact: factRowOfJson(r.fact) } : {}),
  }));
}
