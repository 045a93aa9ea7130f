import { builder } from '../../../kernel/schema/builder.js';

export const SourceInputRef = builder.inputType('SourceInput', {
  description:
    'Which outside source reports an observation. With externalId, (system, stream, externalId) identifies it; ' +
    'without, the canonical content does.',
  fields: (t) => ({
    system: t.string({ required: true }),
    stream: t.string({ description: 'A conversation, channel or queue; also the default session id.' }),
    externalId: t.string({
      description: "The event's id in the source; a repeat with the same id is DUPLICATE.",
    }),
  }),
});
