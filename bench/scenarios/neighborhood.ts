import { NEIGHBORHOOD_QUERY } from '../graph-bench.js';
import type { ReadScenario } from './types.js';

/**
 * The 2-hop neighbourhood of an entity (at most 40 nodes, each with the fact it came through):
 * the graph-read benchmark's query (bench/graph-bench.ts) over HTTP on the seeded dataset.
 */
export const neighborhood: ReadScenario = {
  kind: 'read',
  name: 'neighbors',
  title: '2-hop neighbourhood (limit 40)',
  document: NEIGHBORHOOD_QUERY,
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) }),
};

export const neighborhoodHubs: ReadScenario = {
  kind: 'read',
  name: 'neighbors-hubs',
  title: '2-hop neighbourhood, top-20 hubs',
  document: NEIGHBORHOOD_QUERY,
  concurrency: [1],
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.hubKey(i % 20) }),
};
