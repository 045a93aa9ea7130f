import type { DroppedValue } from '../compiler/compile.js';
import { builder } from '../../../kernel/schema/builder.js';

export const DroppedItemRef = builder.objectRef<DroppedValue>('DroppedItem').implement({
  description: 'A candidate left out of the pack: OVER_BUDGET or BELOW_RELEVANCE_FLOOR.',
  fields: (t) => ({
    id: t.id({ resolve: (d) => d.id }),
    reason: t.exposeString('reason'),
    tokenEstimate: t.exposeInt('tokenEstimate'),
  }),
});
