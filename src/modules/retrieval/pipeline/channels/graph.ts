import type { Queryable } from '../../../../db/database.js';
import { type GraphWalkRow, graphNeighbours } from '../../store/anchored-channel-store.js';

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
  /** Also read each neighbour's entity row and the fact it was reached through (search shows them). */
  withRows?: boolean;
}

/**
 * A neighbour: hops from the nearest seed (1 or 2), the fact the nearest path arrived through,
 * for distance 2 the first-hop entity (`throughKey`), how many walked edges reach it
 * (`support`), and its first visible chunk when it has text.
 */
export type GraphNeighbor = GraphWalkRow;

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
  return graphNeighbours(q, {
    seeds,
    visibleScopes: input.visibleScopes,
    asOf: input.asOf ?? new Date(),
    heldAt: input.heldAt ?? null,
    hops,
    maxNodes: input.maxNodes,
    maxEdgesPerNode: input.maxEdgesPerNode,
    withRows: input.withRows === true,
  });
}
