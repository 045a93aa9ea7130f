import { EXPLORE_QUERY } from '../graph-bench.js';
import type { ReadScenario } from './types.js';

/**
 * A frontend exploring the graph three levels out from an entity. The query is the graph-read
 * benchmark's own (bench/graph-bench.ts), run here over HTTP on the seeded dataset: anchors
 * half by degree, half uniform; and separately on the 20 biggest hubs.
 */
export const explore: ReadScenario = {
  kind: 'read',
  name: 'explore',
  title: '3-level exploration (graph-bench EXPLORE_QUERY)',
  document: EXPLORE_QUERY,
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) }),
};

export const exploreHubs: ReadScenario = {
  kind: 'read',
  name: 'explore-hubs',
  title: '3-level exploration, top-20 hubs',
  document: EXPLORE_QUERY,
  concurrency: [1],
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.hubKey(i % 20) }),
};
