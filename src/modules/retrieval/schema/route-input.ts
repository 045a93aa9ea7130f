import { builder } from '../../../kernel/schema/builder.js';

export const RouteInputRef = builder.inputType('RouteInput', {
  description: 'A query to route (inspection of what context(strategy: AUTO) would do).',
  fields: (t) => ({
    namespaces: t.stringList({ required: true, description: 'Where entity hints are resolved (1–10).' }),
    query: t.string({ required: true }),
    referenceTime: t.field({
      type: 'DateTime',
      description: 'What relative dates ("last week") are resolved against; default the request time.',
    }),
  }),
});
