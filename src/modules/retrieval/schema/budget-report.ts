import type { ContextPackValue } from '../compiler/compile.js';
import { builder } from '../../../kernel/schema/builder.js';
import { DroppedItemRef } from './dropped-item.js';

export const BudgetReportRef = builder.objectRef<ContextPackValue['budget']>('BudgetReport').implement({
  description: 'How the token budget was spent.',
  fields: (t) => ({
    maxTokens: t.exposeInt('maxTokens'),
    used: t.exposeInt('used', {
      description:
        "Tokens used by the rendered text (banner, section headers and item blocks): equal to the pack's tokenEstimate.",
    }),
    truncated: t.exposeBoolean('truncated', {
      description: 'True when the ephemeral context (CURRENT) had to be cut (or left out) to fit.',
    }),
    dropped: t.field({ type: [DroppedItemRef], resolve: (b) => b.dropped }),
  }),
});
