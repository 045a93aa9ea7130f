import { builder } from '../../../kernel/schema/builder.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';

// purgeEntity lives apart from entity.ts: it answers with a WritePayload, not an Entity.
builder.mutationFields((t) => ({
  purgeEntity: t.field({
    type: WritePayloadRef,
    description:
      'Deletes an entity with its attribute versions, chunks, facts (both directions) and mentions, and writes an ' +
      'audit record summarising what went. Audit records cannot be changed or deleted through the API.',
    args: {
      namespace: t.arg.string({ required: true }),
      key: t.arg.string({ required: true }),
      reason: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.purge.purgeEntity(args.namespace, args.key, args.reason),
  }),
}));
