import type { ReadScenario } from './types.js';

/** The agent read path: a HYBRID ContextPack under the default 8000-token budget. */
export const context: ReadScenario = {
  kind: 'read',
  name: 'context',
  title: 'context (HYBRID, budget 8000)',
  document: `query BenchContext($input: ContextInput!) {
  context(input: $input) {
    traceId tokenEstimate text warnings
    sections { kind items { kind id title score tokenEstimate conflict } }
    budget { used maxTokens truncated }
  }
}`,
  variables: (ds, i) => ({
    input: {
      namespaces: [ds.namespace],
      query: ds.searchQuery(i % 256),
      budgetTokens: 8000,
      strategy: 'HYBRID',
    },
  }),
};
