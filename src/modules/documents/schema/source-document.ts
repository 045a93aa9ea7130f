import type { SourceDocumentView } from '../document-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { DocumentInputRef } from './document-input.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';

export const SourceDocumentRef = builder.objectRef<SourceDocumentView>('SourceDocument').implement({
  description: 'A document whole: its original text (or its chunks stitched back), with provenance.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    key: t.exposeString('key'),
    kind: t.exposeString('kind'),
    title: t.exposeString('title'),
    sourcePath: t.string({ nullable: true, resolve: (d) => d.sourcePath }),
    content: t.exposeString('content', {
      description: 'Personal data is masked unless the principal may see it.',
    }),
    contentSource: t.exposeString('contentSource', {
      description:
        '"original" (the text as written) or "chunks" (stitched from the chunks, overlap removed).',
    }),
    chunkCount: t.exposeInt('chunkCount'),
    provenance: t.field({ type: 'JSON', nullable: true, resolve: (d) => d.provenance ?? null }),
    meta: t.field({ type: 'JSON', nullable: true, resolve: (d) => d.meta ?? null }),
    pii: t.exposeBoolean('pii'),
    piiCategories: t.exposeStringList('piiCategories'),
    updatedAt: t.field({ type: 'DateTime', resolve: (d) => d.updatedAt }),
  }),
});

builder.queryFields((t) => ({
  source: t.field({
    type: SourceDocumentRef,
    nullable: true,
    description: 'A document whole by key; null when absent or not visible.',
    args: { namespace: t.arg.string({ required: true }), key: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.documents.source(args.namespace, args.key),
  }),
}));

builder.mutationFields((t) => ({
  retainDocuments: t.field({
    type: WritePayloadRef,
    description:
      'Creates or rewrites documents by key (chunks replaced atomically); the same document again is UNCHANGED.',
    args: {
      namespace: t.arg.string({ required: true }),
      documents: t.arg({ type: [DocumentInputRef], required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.documents.retainDocuments(args.namespace, args.documents),
  }),
}));
