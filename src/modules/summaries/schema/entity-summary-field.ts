import { builder } from '../../../kernel/schema/builder.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { EntitySummaryRef } from './entity-summary.js';

builder.objectFields(EntityRef, (t) => ({
  summary: t.field({
    type: EntitySummaryRef,
    nullable: true,
    description:
      'What memory knows about this entity at asOf (default: now), consolidated with provenance to every source. ' +
      'Null when nothing is known of it then.',
    args: { asOf: t.arg({ type: 'DateTime' }) },
    resolve: (e, args, ctx) => ctx.services.summaries.forEntity(e, args.asOf ?? null),
  }),
}));
