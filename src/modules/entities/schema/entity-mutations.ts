import { builder } from '../../../kernel/schema/builder.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';
import { EntityInputRef } from './entity-input.js';

builder.mutationFields((t) => ({
  upsertEntities: t.field({
    type: WritePayloadRef,
    description: 'Creates or updates entities by key; each item answers for itself.',
    args: {
      namespace: t.arg.string({ required: true }),
      entities: t.arg({ type: [EntityInputRef], required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.entities.upsertEntities(args.namespace, args.entities),
  }),
}));
