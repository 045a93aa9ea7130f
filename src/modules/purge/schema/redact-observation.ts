import { builder } from '../../../kernel/schema/builder.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';

builder.mutationFields((t) => ({
  redactObservation: t.field({
    type: WritePayloadRef,
    description:
      'Replaces content and data (status REDACTED), deletes its chunks and removes it from every fact’s evidence; ' +
      'a fact left without evidence becomes EVIDENCE_LOST. Audited.',
    args: {
      namespace: t.arg.string({ required: true }),
      observationId: t.arg.string({ required: true }),
      reason: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.purge.redactObservation(args.namespace, args.observationId, args.reason),
  }),
}));
