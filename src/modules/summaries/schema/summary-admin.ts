import { builder } from '../../../kernel/schema/builder.js';
import type { SummaryCounts } from '../store/summary-store.js';

const SummaryStatusRef = builder.objectRef<SummaryCounts & { namespace: string }>('SummaryStatus').implement({
  description:
    'Entity summaries of a namespace: how many are stored, for how many entities, and how many wait for a rebuild.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    summaries: t.exposeInt('summaries', {
      description: 'Stored summaries (one per visibility class of an entity).',
    }),
    entities: t.exposeInt('entities'),
    pending: t.exposeInt('pending', {
      description: 'Entities whose evidence changed since their summary was built.',
    }),
  }),
});

builder.queryFields((t) => ({
  summaryStatus: t.field({
    type: SummaryStatusRef,
    description: 'How entity summaries stand in a namespace (admins, or principals that see every scope).',
    args: { namespace: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.summaries.status(args.namespace),
  }),
}));

builder.mutationFields((t) => ({
  rebuildSummaries: t.int({
    description:
      'Queues every entity of a namespace for a summary rebuild (after a change of the rule, or a restore); returns how ' +
      'many were queued. The refresher rebuilds them in the background.',
    args: { namespace: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.summaries.rebuild(args.namespace),
  }),
}));
