import { builder } from '../../../kernel/schema/builder.js';

export const TextSearchConfigurationRef = builder
  .objectRef<{ configuration: string; chunks: number | null }>('TextSearchConfiguration')
  .implement({
    description: 'One text-search configuration the chunks of a namespace are indexed in.',
    fields: (t) => ({
      configuration: t.exposeString('configuration', {
        description: 'A pg_ts_config name: russian, english…',
      }),
      chunks: t.int({
        nullable: true,
        description: 'Chunks indexed in it (null for principals restricted to some visibility scopes).',
        resolve: (c) => c.chunks,
      }),
    }),
  });
