import { builder } from '../../../kernel/schema/builder.js';
import type { ExtractionStatusView } from '../extraction-service.js';

const FailureRef = builder.objectRef<{ reason: string; count: number }>('ExtractionFailure').implement({
  description: 'Why jobs were retried or died, and how many carry that reason now.',
  fields: (t) => ({
    reason: t.exposeString('reason'),
    count: t.exposeInt('count'),
  }),
});

const StatusRef = builder.objectRef<ExtractionStatusView>('ExtractionStatus').implement({
  description:
    'Model extraction of a namespace: jobs by state (QUEUED, RUNNING, DONE, DEAD), tokens spent, facts written, failure reasons, the settings in force.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    model: t.exposeString('model', {
      nullable: true,
      description: 'Null when no model is configured: nothing is queued.',
    }),
    queued: t.exposeInt('queued'),
    running: t.exposeInt('running'),
    done: t.exposeInt('done'),
    failed: t.exposeInt('dead', {
      description: 'Jobs that died after their last try (dead letters), with reasons in `failures`.',
    }),
    tokensIn: t.exposeInt('tokensIn'),
    tokensOut: t.exposeInt('tokensOut'),
    factsWritten: t.exposeInt('factsWritten'),
    failures: t.field({ type: [FailureRef], resolve: (s) => s.failures }),
    settings: t.field({ type: 'JSON', resolve: (s) => s.settings }),
  }),
});

builder.queryFields((t) => ({
  extractionStatus: t.field({
    type: StatusRef,
    description: 'How learning from text goes in a namespace: queue states, tokens, facts and failures.',
    args: { namespace: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.extraction.status(args.namespace),
  }),
}));

builder.mutationFields((t) => ({
  configureExtraction: t.field({
    type: 'JSON',
    description:
      'Sets a namespace’s extraction settings (merged over the current ones): rules, model (on/off), modelName, sendPii (off by default), tokenBudget (per 24 h), concurrency.',
    args: {
      namespace: t.arg.string({ required: true }),
      settings: t.arg({ type: 'JSON', required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.extraction.configure(args.namespace, args.settings),
  }),
}));
