import type { ImportFinish } from '../bulk-import-service.js';
import { builder } from '../../../kernel/schema/builder.js';

const VectorIndexStepEnum = builder.enumType('VectorIndexStep', {
  values: {
    BUILT: { description: 'The index was missing (or left invalid by a crash) and was built now.' },
    READY: { description: 'The index was already in place.' },
  },
});

export const ImportFinishRef = builder.objectRef<ImportFinish>('ImportFinish').implement({
  description: 'The end of a bulk import: the vector index is in place again.',
  fields: (t) => ({
    vectorIndex: t.field({ type: VectorIndexStepEnum, resolve: (f) => f.vectorIndex }),
    ms: t.exposeFloat('ms', { description: 'Time the step took.' }),
  }),
});

builder.mutationFields((t) => ({
  finishImport: t.field({
    type: ImportFinishRef,
    description:
      'Ends a bulk import: builds the vector index when beginImport dropped it or a crash left it unfinished. Safe to repeat.',
    args: { namespace: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.bulkImport.finishImport(args.namespace),
  }),
}));
