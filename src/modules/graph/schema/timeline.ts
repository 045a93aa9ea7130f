import type { TimelineEvent, TimelinePage } from '../graph-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { pageArgs } from '../../../kernel/schema/connection-helpers.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { FactRef } from '../../../kernel/schema/fact.js';
import { ObservationRef } from '../../../kernel/schema/observation.js';

export const TimelineEventKindEnum = builder.enumType('TimelineEventKind', {
  description: 'What happened: a fact became valid, stopped being valid, or an observation arrived.',
  values: ['FACT_OPENED', 'FACT_CLOSED', 'OBSERVATION'] as const,
});

export const TimelineEventRef = builder.objectRef<TimelineEvent>('TimelineEvent').implement({
  description: 'One event of an entity timeline: `at` is validFrom, validTo or occurredAt.',
  fields: (t) => ({
    kind: t.field({ type: TimelineEventKindEnum, resolve: (e) => e.kind }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
    fact: t.field({ type: FactRef, nullable: true, resolve: (e) => e.fact }),
    observation: t.field({ type: ObservationRef, nullable: true, resolve: (e) => e.observation }),
  }),
});

export const TimelineConnectionRef = builder.connectionObject(
  {
    type: TimelineEventRef,
    name: 'TimelineConnection',
    fields: (t) => ({
      entity: t.field({ type: EntityRef, resolve: (c) => (c as unknown as TimelinePage).entity }),
    }),
  },
  { name: 'TimelineEdge' },
);

builder.queryFields((t) => ({
  timeline: t.field({
    type: TimelineConnectionRef,
    nullable: true,
    description:
      'What was true of an entity and when it changed: every fact it is an endpoint of opening and closing ' +
      '(superseded and retracted versions included) and the observations about it, oldest first, in ' +
      '[since, until). Null when the entity does not exist or is not visible.',
    args: {
      namespace: t.arg.string({ required: true }),
      key: t.arg.string({ required: true }),
      since: t.arg({ type: 'DateTime' }),
      until: t.arg({ type: 'DateTime' }),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.graph.timeline(
        { namespace: args.namespace, key: args.key, since: args.since, until: args.until },
        pageArgs(args),
      ),
  }),
}));
