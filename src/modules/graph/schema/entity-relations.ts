import { builder } from '../../../kernel/schema/builder.js';
import { ChunkConnectionRef } from '../../../kernel/schema/chunk-connection.js';
import { pageArgs } from '../../../kernel/schema/connection-helpers.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { DirectionEnum } from '../../../kernel/schema/enums.js';
import { FactConnectionRef } from '../../../kernel/schema/fact-connection.js';
import { NeighborRef } from './neighbor.js';
import { ObservationConnectionRef } from '../../../kernel/schema/observation-connection.js';

// The relations of Entity, each through a per-request loader: one statement per nesting level.
builder.objectFields(EntityRef, (t) => ({
  attributes: t.field({
    type: 'JSON',
    nullable: true,
    description:
      'Attributes from the version in force at asOf (default: the current ones); null if none was.',
    args: { asOf: t.arg({ type: 'DateTime' }) },
    resolve: (e, args, ctx) => ctx.services.graph.attributes(e, args.asOf),
  }),
  facts: t.field({
    type: FactConnectionRef,
    description:
      'Facts this entity is an endpoint of, newest validFrom first. Without includeHistory: those valid at ' +
      'asOf (default now), from ≤ asOf < to, neither retracted nor without evidence. With includeHistory: ' +
      'every version (superseded, retracted, evidence lost) that started by asOf, if asOf is given.',
    args: {
      asOf: t.arg({ type: 'DateTime' }),
      predicates: t.arg.stringList(),
      direction: t.arg({ type: DirectionEnum, defaultValue: 'BOTH' }),
      includeHistory: t.arg.boolean({ defaultValue: false }),
      first: t.arg.int({ defaultValue: 20 }),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    resolve: (e, args, ctx) =>
      ctx.services.graph.entityFacts(
        e,
        {
          asOf: args.asOf,
          predicates: args.predicates,
          direction: args.direction,
          includeHistory: args.includeHistory,
        },
        pageArgs(args),
      ),
  }),
  neighbors: t.field({
    type: [NeighborRef],
    description:
      'Entities 1–2 hops away through facts valid at asOf, inside this namespace only, nearest first, at most ' +
      '`limit` (≤ 40).',
    args: {
      hops: t.arg.int({ defaultValue: 1 }),
      predicates: t.arg.stringList(),
      asOf: t.arg({ type: 'DateTime' }),
      limit: t.arg.int({ defaultValue: 40 }),
    },
    resolve: (e, args, ctx) => ctx.services.graph.neighbors(e, args),
  }),
  chunks: t.field({
    type: ChunkConnectionRef,
    description: 'Text chunks this entity owns, in document order.',
    args: {
      first: t.arg.int({ defaultValue: 20 }),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    resolve: (e, args, ctx) => ctx.services.graph.entityChunks(e, pageArgs(args)),
  }),
  observations: t.field({
    type: ObservationConnectionRef,
    description: 'The evidence that mentions this entity or wrote its attributes, newest first.',
    args: {
      first: t.arg.int({ defaultValue: 20 }),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    resolve: (e, args, ctx) => ctx.services.graph.entityObservations(e, pageArgs(args)),
  }),
}));
