import type { ContextPackValue } from '../compiler/pack-types.js';
import type { RoutedExtras } from '../router/route-value.js';
import { builder } from '../../../kernel/schema/builder.js';
import { BudgetReportRef } from './budget-report.js';
import { ContextInputRef } from './context-input.js';
import { ContextSectionRef } from './context-section.js';
import { FactRef } from '../../../kernel/schema/fact.js';
import { RouteRef } from './route.js';
import { SourceRefRef } from '../../documents/schema/index.js';

export const ContextPackRef = builder
  .objectRef<ContextPackValue & Partial<RoutedExtras>>('ContextPack')
  .implement({
    description:
      'What an agent should know now, under a token budget, every item explained; see contextTrace(traceId).',
    fields: (t) => ({
      query: t.exposeString('query'),
      sections: t.field({ type: [ContextSectionRef], resolve: (p) => p.sections }),
      sources: t.field({ type: [SourceRefRef], resolve: (p) => p.sources }),
      tokenEstimate: t.exposeInt('tokenEstimate', {
        description: 'Estimate of `text`; never above the budget.',
      }),
      budget: t.field({ type: BudgetReportRef, resolve: (p) => p.budget }),
      conflicts: t.exposeStringList('conflicts', {
        description: 'Fact ids in open conflict among the candidates.',
      }),
      warnings: t.exposeStringList('warnings', {
        description: 'open_conflict, evidence_lost, channel_failed, channel_timeout, current_truncated…',
      }),
      emptyReason: t.string({
        nullable: true,
        description: '"no_relevant_memory" when only the recall floor emptied the pack (not an error).',
        resolve: (p) => p.emptyReason,
      }),
      traceId: t.exposeString('traceId'),
      text: t.exposeString('text', { description: 'The pack rendered for a prompt; "" when empty.' }),
      route: t.field({
        type: RouteRef,
        nullable: true,
        description: 'strategy AUTO: how the query was routed and what the handler found; null otherwise.',
        resolve: (p) => p.route ?? null,
      }),
      invalidatedFacts: t.field({
        type: [FactRef],
        description:
          'strategy AUTO: facts about the entities involved that held before and no longer do at asOf ' +
          '(superseded or closed), listed apart from the pack; empty otherwise.',
        resolve: (p) => p.invalidatedFacts ?? [],
      }),
    }),
  });

builder.queryFields((t) => ({
  context: t.field({
    type: ContextPackRef,
    description:
      'Compiles a ContextPack: channels by strategy, weighted RRF + bonuses, packing under the budget.',
    args: { input: t.arg({ type: ContextInputRef, required: true }) },
    resolve: (_root, args, ctx) => ctx.services.context.compile(args.input as Record<string, unknown>),
  }),
}));
