import type { ReadScenario } from './types.js';

/** Hybrid search as an agent calls it: k 8, one hop of graph neighbours, the context text. */
export const search: ReadScenario = {
  kind: 'read',
  name: 'search',
  title: 'search (HYBRID, k 8, hops 1)',
  document: `query BenchSearch($input: SearchInput!) {
  search(input: $input) {
    hits { score chunk { id title heading text node { key } } channels { channel rank score } }
    neighbors { distance entity { key title } via { predicate } }
    sources { key title sourcePath }
    context
  }
}`,
  variables: (ds, i) => ({
    input: { namespaces: [ds.namespace], query: ds.searchQuery(i % 256), k: 8, mode: 'HYBRID', hops: 1 },
  }),
};
