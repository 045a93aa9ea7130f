import type { FacetsValue } from '../router/route-value.js';
import { builder } from '../../../kernel/schema/builder.js';
import { FacetCountRef } from './facet-count.js';

export const FacetsRef = builder.objectRef<FacetsValue>('Facets').implement({
  description:
    'What came up in a time window, as counts only (no content is read): topics (observation kinds with ' +
    'observation counts), entities (with mention counts), predicates (with fact counts). Highest count first, ' +
    'at most 50 each.',
  fields: (t) => ({
    topics: t.field({ type: [FacetCountRef], resolve: (f) => f.topics }),
    entities: t.field({ type: [FacetCountRef], resolve: (f) => f.entities }),
    predicates: t.field({ type: [FacetCountRef], resolve: (f) => f.predicates }),
  }),
});

builder.queryFields((t) => ({
  facets: t.field({
    type: FacetsRef,
    description:
      'Counts over [since, until) of observation time (facts: validFrom): topics, entities, predicates.',
    args: {
      namespace: t.arg.string({ required: true }),
      since: t.arg({ type: 'DateTime' }),
      until: t.arg({ type: 'DateTime' }),
    },
    resolve: (_root, args, ctx) => ctx.services.route.facets(args),
  }),
}));
