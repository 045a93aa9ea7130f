import { builder } from '../../../kernel/schema/builder.js';

export const EntityInputRef = builder.inputType('EntityInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    kind: t.string({ required: true }),
    title: t.string(),
    attributes: t.field({ type: 'JSON' }),
    validFrom: t.field({
      type: 'DateTime',
      description: 'When these attributes became true (default: now).',
    }),
    scopes: t.stringList(),
    sourcePath: t.string(),
    confidence: t.float(),
  }),
});
