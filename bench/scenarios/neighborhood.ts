import type { ReadScenario } from './types.js';

/** The 2-hop neighbourhood of an entity (at most 40 nodes), each with the fact it came through. */
export const neighborhood: ReadScenario = {
  kind: 'read',
  name: 'neighbors',
  title: '2-hop neighbourhood (limit 40)',
  document: `query BenchNeighbors($ns: String!, $key: String!) {
  entity(namespace: $ns, key: $key) {
    key
    neighbors(hops: 2, limit: 40) { distance entity { key kind title } via { predicate validFrom } }
  }
}`,
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) }),
};
