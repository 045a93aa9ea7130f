import type { Queryable } from '../../db/database.js';
import { chunkHeldAt, factHeldAt, factVisibleTo, visibleTo } from '../../store/visibility.js';

export interface GraphSeed {
  namespace: string;
  key: string;
}

export interface GraphChannelInput {
  /** Entities to walk from (the top hits' nodes, or a compiler's anchors). */
  seeds: GraphSeed[];
  /** The requested namespaces: a seed outside them is ignored, and edges never cross them. */
  namespaces: string[];
  visibleScopes: string[] | null;
  /** 0–2; 0 returns nothing. */
  hops: number;
  maxNodes: number;
  maxEdgesPerNode: number;
  /** Facts valid at this instant are walked (default now). */
  asOf?: Date | null;
  /**
   * What memory held at this instant (default now, no bound): facts whose evidence was there
   * by then, a neighbour's chunk written by then (see store/visibility.ts).
   */
  heldAt?: Date | null;
}

export interface GraphNeighbor {
  namespace: string;
  key: string;
  /** Hops from the nearest seed (1 or 2). */
  distance: number;
  /** The fact the nearest path arrived through. */
  factId: string;
  /** For a distance-2 neighbour, the first-hop entity of that path. */
  throughKey: string | null;
  /** How many walked edges reach this node: more paths from the seeds, more related. */
  support: number;
  /** The node's first visible chunk, when it has text (for rerank pools and packing). */
  chunkId: number | null;
}

/**
 * Neighbours of the seeds through current facts (status ACTIVE, valid at `asOf`), breadth
 * first, both directions, at most `hops` steps, cycle-free, inside each seed's namespace.
 * Each step follows at most `maxEdgesPerNode` edges per node per direction (newest first, an
 * index range scan on (namespace, subject|object, valid_from)), so hubs stay cheap. Seeds
 * themselves are not neighbours; invisible facts are not walked and invisible entities are
 * not returned. Ordered by distance, then support; at most `maxNodes`.
 */
export async function graphChannel(q: Queryable, input: GraphChannelInput): Promise<GraphNeighbor[]> {
  const hops = Math.max(0, Math.min(2, Math.trunc(input.hops)));
  const seeds = input.seeds.filter((s) => input.namespaces.includes(s.namespace));
  if (hops === 0 || seeds.length === 0 || input.maxNodes <= 0) return [];
  const { rows } = await q.query<{
    namespace: string;
    key: string;
    distance: unknown;
    factId: string;
    throughKey: string | null;
    support: unknown;
    chunkId: unknown;
  }>(
    `/* graphChannel */
     WITH RECURSIVE seeds AS (
       SELECT DISTINCT s.namespace, s.key FROM unnest($1::text[], $2::text[]) AS s(namespace, key)
     ), walk(namespace, key, distance, via, path) AS (
       SELECT s.namespace, s.key, 0, NULL::text, ARRAY[s.key] FROM seeds s
       UNION ALL
       SELECT w.namespace, e.next, w.distance + 1, e.fact_id, w.path || e.next
       FROM walk w CROSS JOIN LATERAL (
         (SELECT f.fact_id, f.object AS next FROM facts f
          WHERE f.namespace = w.namespace AND f.subject = w.key AND f.status = 'ACTIVE'
            AND f.valid_from <= $4::timestamptz AND (f.valid_to IS NULL OR f.valid_to > $4::timestamptz)
            AND ${factHeldAt('f', '$8')} AND ${factVisibleTo('f', '$3')}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT $6)
         UNION ALL
         (SELECT f.fact_id, f.subject AS next FROM facts f
          WHERE f.namespace = w.namespace AND f.object = w.key AND f.status = 'ACTIVE'
            AND f.valid_from <= $4::timestamptz AND (f.valid_to IS NULL OR f.valid_to > $4::timestamptz)
            AND ${factHeldAt('f', '$8')} AND ${factVisibleTo('f', '$3')}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT $6)
       ) e
       WHERE w.distance < $5 AND NOT e.next = ANY(w.path)
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
             WHERE c.namespace = r.namespace AND c.node_key = r.key AND ${visibleTo('c', '$3')}
               AND ${chunkHeldAt('c', '$8')}
             ORDER BY c.ord LIMIT 1) AS "chunkId"
     FROM reached r
     JOIN entities e ON e.namespace = r.namespace AND e.key = r.key AND ${visibleTo('e', '$3')}
     ORDER BY r.distance, r.support DESC, r.namespace, r.key
     LIMIT $7`,
    [
      seeds.map((s) => s.namespace),
      seeds.map((s) => s.key),
      input.visibleScopes,
      input.asOf ?? new Date(),
      hops,
      input.maxEdgesPerNode,
      input.maxNodes,
      input.heldAt ?? null,
    ],
  );
  return rows.map((r) => ({
    namespace: r.namespace,
    key: r.key,
    distance: Number(r.distance),
    factId: r.factId,
    throughKey: r.throughKey,
    support: Number(r.support),
    chunkId: r.chunkId == null ? null : Number(r.chunkId),
  }));
}
