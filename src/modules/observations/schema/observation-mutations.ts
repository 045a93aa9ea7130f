import { builder } from '../../../kernel/schema/builder.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';
import { ObservationInputRef } from './observation-input.js';

builder.mutationFields((t) => ({
  recordObservations: t.field({
    type: WritePayloadRef,
    description:
      'Records observations (a repeat is DUPLICATE and changes nothing), indexes their content as chunks and ' +
      'projects their assertions in the same transaction; each item answers for itself.',
    args: {
      namespace: t.arg.string({ required: true }),
      observations: t.arg({ type: [ObservationInputRef], required: true }),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.observations.recordObservations(args.namespace, args.observations),
  }),
}));
