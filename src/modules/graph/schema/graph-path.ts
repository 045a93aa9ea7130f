import type { GraphPath } from '../graph-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { FactRef } from '../../../kernel/schema/fact.js';

export const GraphPathRef = builder.objectRef<GraphPath>('GraphPath').implement({
  description:
    'A chain entities[0] —facts[0]— entities[1] … —facts[n-1]— entities[n]; facts may point either way.',
  fields: (t) => ({
    entities: t.field({ type: [EntityRef], resolve: (p) => p.entities }),
    facts: t.field({ type: [FactRef], resolve: (p) => p.facts }),
    length: t.int({ description: 'Number of facts (hops).', resolve: (p) => p.facts.length }),
  }),
});

builder.queryFields((t) => ({
  paths: t.field({
    type: [GraphPathRef],
    description:
      'The shortest paths connecting two entities through facts valid at asOf (default now), edge direction ' +
      'ignored, at most maxHops (≤ 4) long; empty when none is that short.',
    args: {
      namespace: t.arg.string({ required: true }),
      from: t.arg.string({ required: true }),
      to: t.arg.string({ required: true }),
      maxHops: t.arg.int({ defaultValue: 3 }),
      asOf: t.arg({ type: 'DateTime' }),
      limit: t.arg.int({ defaultValue: 10, description: 'Paths returned at most (≤ 50).' }),
    },
    resolve: (_root, args, ctx) => ctx.services.graph.paths(args),
  }),
}));
