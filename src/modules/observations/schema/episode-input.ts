import { builder } from '../../../kernel/schema/builder.js';

export const EpisodeInputRef = builder.inputType('EpisodeInput', {
  description:
    'A meaningful slice of experience: an entity of kind `episode` whose text becomes its chunk, with ' +
    'provenance to the observation. Without a key it is `episode:<observationId>`.',
  fields: (t) => ({
    key: t.string(),
    title: t.string(),
    text: t.string({ required: true }),
  }),
});
