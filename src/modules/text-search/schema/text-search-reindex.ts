import type { ReindexView } from '../text-search-service.js';
import { builder } from '../../../kernel/schema/builder.js';

export const TextSearchReindexRef = builder.objectRef<ReindexView>('TextSearchReindex').implement({
  description:
    'The re-derivation of tsvectors and BM25 postings after a change of language: batches of a few hundred chunks, reads answer throughout.',
  fields: (t) => ({
    textSearch: t.exposeString('textSearch', { description: 'The setting being applied.' }),
    state: t.exposeString('state', {
      description: 'RUNNING, DONE or FAILED (set the language again to resume).',
    }),
    progress: t.exposeFloat('progress', { description: 'Fraction of the chunks done, 0 to 1.' }),
    done: t.int({
      nullable: true,
      resolve: (r) => r.done,
      description: 'Chunks done (unrestricted principals).',
    }),
    total: t.int({
      nullable: true,
      resolve: (r) => r.total,
      description: 'Chunks to do (unrestricted principals).',
    }),
    startedAt: t.field({ type: 'DateTime', resolve: (r) => r.startedAt }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => r.finishedAt }),
  }),
});
