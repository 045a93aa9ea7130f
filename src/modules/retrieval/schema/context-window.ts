import { builder } from '../../../kernel/schema/builder.js';

// The contextual-index window of a namespace: how many neighbouring turns of the same session
// a short turn is indexed with (see src/kernel/store/context-index-store.ts).

builder.mutationFields((t) => ({
  configureContextWindow: t.field({
    type: 'JSON',
    description:
      'Sets how many previous and next turns of the same session or stream each short observation is indexed with (0–5 each; both omitted = the default 2 and 1; 0 and 0 = off) and re-indexes the namespace. Admins only (or a principal that sees every scope): the re-index touches every chunk. Answers {namespace, previous, next, reindexedChunks}.',
    args: {
      namespace: t.arg.string({ required: true }),
      previous: t.arg.int(),
      next: t.arg.int(),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.contextIndex.configure(args.namespace, args.previous ?? null, args.next ?? null),
  }),
}));
