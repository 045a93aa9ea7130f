import type { ReadScenario } from './types.js';

/** The cheapest read (one entity by key): the gateway's fixed cost per request. */
export const entityLookup: ReadScenario = {
  kind: 'read',
  name: 'entity',
  title: 'entity by key (baseline)',
  document: `query BenchEntity($ns: String!, $key: String!) {
  entity(namespace: $ns, key: $key) { id key kind title }
}`,
  variables: (ds, i) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) }),
};
