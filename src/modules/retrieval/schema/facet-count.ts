import type { FacetCountRow } from '../store/facets-store.js';
import { builder } from '../../../kernel/schema/builder.js';

export const FacetCountRef = builder.objectRef<FacetCountRow>('FacetCount').implement({
  description: 'One value of a facet and how often it occurs in the window.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'Observation kind, entity key or predicate.' }),
    label: t.exposeString('label', { description: 'Human-readable name (entity title; otherwise the key).' }),
    count: t.exposeInt('count', {
      description: 'Observations (topics), mentioning observations (entities) or facts (predicates).',
    }),
  }),
});
