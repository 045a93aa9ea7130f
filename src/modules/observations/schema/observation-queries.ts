import { builder } from '../../../kernel/schema/builder.js';
import { pageArgs } from '../../../kernel/schema/connection-helpers.js';
import { ObservationRef } from '../../../kernel/schema/observation.js';
import { ObservationConnectionRef } from '../../../kernel/schema/observation-connection.js';

builder.queryFields((t) => ({
  observation: t.field({
    type: ObservationRef,
    nullable: true,
    description: 'One observation by id; null when absent or not visible.',
    args: {
      namespace: t.arg.string({ required: true }),
      observationId: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.graph.observation(args.namespace, args.observationId),
  }),
  observations: t.field({
    type: ObservationConnectionRef,
    description:
      'Observations of a namespace, newest occurredAt first, optionally of some kinds, in [since, until).',
    args: {
      namespace: t.arg.string({ required: true }),
      kinds: t.arg.stringList(),
      since: t.arg({ type: 'DateTime' }),
      until: t.arg({ type: 'DateTime' }),
      first: t.arg.int({ defaultValue: 20 }),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.graph.observations(
        { namespace: args.namespace, kinds: args.kinds, since: args.since, until: args.until },
        pageArgs(args),
      ),
  }),
}));
