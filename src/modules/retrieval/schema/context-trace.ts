import type { ContextTraceView } from '../context-service.js';
import { builder } from '../../../kernel/schema/builder.js';

export const ContextTraceRef = builder.objectRef<ContextTraceView>('ContextTrace').implement({
  description: 'Why each candidate was or was not in a pack. Holds only the size of the ephemeral context.',
  fields: (t) => ({
    traceId: t.exposeString('traceId'),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
    kind: t.exposeString('kind'),
    request: t.field({
      type: 'JSON',
      description: 'The request without ephemeral content (only its size), and a summary of the result.',
      resolve: (r) => r.request,
    }),
    channels: t.field({
      type: 'JSON',
      description: 'Per channel: candidates found, weight, ms, status (ok | failed | timeout).',
      resolve: (r) => r.channels,
    }),
    decisions: t.field({
      type: 'JSON',
      description:
        'Per candidate: decision INCLUDED | EXCLUDED | BLOCKED with reason (OVER_BUDGET, BELOW_RELEVANCE_FLOOR, ' +
        'DUPLICATE, MULTI_HOP_EXPANSION, EVIDENCE_LOST, SUPERSEDED, NOT_VALID_AT_AS_OF, OUT_OF_SCOPE…), score and signals.',
      resolve: (r) => r.decisions,
    }),
  }),
});

builder.queryFields((t) => ({
  contextTrace: t.field({
    type: ContextTraceRef,
    nullable: true,
    description: 'The persisted trace of a ContextPack; null when absent, pruned or not visible.',
    args: {
      namespace: t.arg.string({ required: true }),
      traceId: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.context.trace(args.namespace, args.traceId),
  }),
}));
