import type { ReadScenario } from './types.js';

/**
 * A frontend exploring the graph three levels out from an entity: its facts and their objects,
 * those objects' facts and objects, and the third level as each of those entities' nearest
 * neighbours (fan-out up to 10 × 10 × 5). DataLoaders should keep this at a few statements
 * per level whatever the fan-out. Written to fit the gateway's query depth limit (12).
 */
export const explore: ReadScenario = {
  kind: 'read',
  name: 'explore',
  title: '3-level exploration (10 × 10 × 5)',
  document: `query BenchExplore($ns: String!, $key: String!) {
  entity(namespace: $ns, key: $key) {
    key kind title
    facts(first: 10) { edges { node { predicate validFrom
      object { key kind title
        facts(first: 10) { edges { node { predicate
          object { key kind title
            neighbors(hops: 1, limit: 5) { distance entity { key title } }
          } } } }
      } } } }
  }
}`,
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) }),
};
