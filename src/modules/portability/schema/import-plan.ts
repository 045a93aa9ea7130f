import type { ImportPlan } from '../bulk-import-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { ObservationInputRef } from '../../observations/schema/index.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';

const VectorIndexPlanEnum = builder.enumType('VectorIndexPlan', {
  description: 'What a bulk import does with the vector (HNSW) index.',
  values: {
    KEEP: { description: 'New chunks go into the live index as they are written.' },
    REBUILD: {
      description:
        'The index is dropped for the load and built once by finishImport; meanwhile vector search runs as an exact scan. The index serves every namespace: only an admin may drop it.',
    },
  },
});

export const ImportPlanRef = builder.objectRef<ImportPlan>('ImportPlan').implement({
  description: 'How a bulk import will treat the vector index, decided from its size.',
  fields: (t) => ({
    vectorIndex: t.field({ type: VectorIndexPlanEnum, resolve: (p) => p.vectorIndex }),
    indexedChunks: t.exposeInt('indexedChunks', {
      description: 'Chunks (all namespaces, estimated) the index held when the import began.',
    }),
  }),
});

builder.mutationFields((t) => ({
  beginImport: t.field({
    type: ImportPlanRef,
    description:
      'Starts a bulk import of about `observations` items: a load that is large next to what is indexed drops the vector index, to be built once by finishImport. Only an admin drops it (the index serves every namespace); for anyone else the plan is KEEP and asking for REBUILD is FORBIDDEN.',
    args: {
      namespace: t.arg.string({ required: true }),
      observations: t.arg.int({ required: true }),
      vectorIndex: t.arg({
        type: VectorIndexPlanEnum,
        required: false,
        description: 'Overrides the choice made from the sizes.',
      }),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.bulkImport.beginImport(args.namespace, args.observations, args.vectorIndex),
  }),
  // Returns a WritePayload; it lives here, beside the other steps of a bulk import.
  importObservations: t.field({
    type: WritePayloadRef,
    description:
      'recordObservations for large batches (up to 5000, within MEMGATE_MAX_LIST_SIZE): same validation, identities and per-item answers, written with COPY and one set-based statement; items with assertions take the online path. A repeat is DUPLICATE, so a re-run resumes.',
    args: {
      namespace: t.arg.string({ required: true }),
      observations: t.arg({ type: [ObservationInputRef], required: true }),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.bulkImport.importObservations(args.namespace, args.observations),
  }),
}));
