import type { TextSearchStatus } from '../text-search-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { TextSearchConfigurationRef } from './text-search-configuration.js';
import { TextSearchReindexRef } from './text-search-reindex.js';

export const TextSearchSettingsRef = builder.objectRef<TextSearchStatus>('TextSearchSettings').implement({
  description: 'The language a namespace is searched in.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    textSearch: t.exposeString('textSearch', {
      description:
        '`auto` (each chunk in its detected language) or a text-search configuration of the database (russian, english, simple…).',
    }),
    inherited: t.exposeBoolean('inherited', {
      description: 'True when the namespace sets none and follows the server default (MEMGATE_TEXT_SEARCH).',
    }),
    configurations: t.field({
      type: [TextSearchConfigurationRef],
      description: 'The configurations chunks are indexed in now; queries are analysed in each of them.',
      resolve: (s) => s.configurations,
    }),
    reindex: t.field({
      type: TextSearchReindexRef,
      nullable: true,
      description: 'The last re-derivation after a change of language.',
      resolve: (s) => s.reindex,
    }),
  }),
});

builder.queryFields((t) => ({
  textSearch: t.field({
    type: TextSearchSettingsRef,
    description: 'The text-search language of a namespace and the progress of its last change.',
    args: { namespace: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.textSearch.status(args.namespace),
  }),
}));

builder.mutationFields((t) => ({
  setTextSearch: t.field({
    type: TextSearchSettingsRef,
    description:
      'Sets the language of a namespace (admins): `auto` or any configuration in pg_ts_config (BAD_USER_INPUT lists them otherwise). Every chunk is re-indexed in batches before the answer; reads keep answering meanwhile.',
    args: {
      namespace: t.arg.string({ required: true }),
      textSearch: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.textSearch.configure(args.namespace, args.textSearch),
  }),
}));
