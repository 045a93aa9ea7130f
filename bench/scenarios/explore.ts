import type { ReadScenario } from './types.js';

/**
 * A frontend exploring the graph three levels deep: an entity, its facts and their objects,
 * their facts and objects, and a third level of facts — DataLoaders should keep this at about
 * one statement per level whatever the fan-out.
 */
export const explore: ReadScenario = {
  kind: 'read',
  name: 'explore',
  title: '3-level exploration (10 × 10 × 5 facts)',
  document: `query BenchExplore($ns: String!, $key: String!) {
  entity(namespace: $ns, key: $key) {
    key kind title
    facts(first: 10) { edges { node { predicate validFrom
      object { key kind title
        facts(first: 10) { edges { node { predicate
          object { key kind title
            facts(first: 5) { edges { node { predicate object { key title } } } }
          } } } }
      } } } }
  }
}`,
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) }),
};
