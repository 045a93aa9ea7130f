import { builder } from '../../../kernel/schema/builder.js';
import { AssertionInputRef } from './assertion-input.js';
import { RefInputRef } from '../../../kernel/schema/ref-input.js';
import { SourceInputRef } from './source-input.js';

export const ObservationInputRef = builder.inputType('ObservationInput', {
  description:
    'What an outside source reported. Limits: content and data ≤ 1 MiB each, ≤ 200 assertions, ≤ 20 scopes, ' +
    'kind matching [a-z0-9][a-z0-9._-]{0,127}; a violation rejects the item with its code.',
  fields: (t) => ({
    source: t.field({ type: SourceInputRef, required: true }),
    kind: t.string({ required: true }),
    occurredAt: t.field({
      type: 'DateTime',
      required: true,
      description:
        'When it happened (recordedAt is when memgate learned it). Observations with the same occurredAt keep the order they arrived in: position in the batch, then later batches.',
    }),
    actor: t.field({ type: RefInputRef }),
    subject: t.field({ type: RefInputRef }),
    scopes: t.stringList(),
    content: t.string({ description: 'Human-readable text; indexed as searchable chunks.' }),
    data: t.field({
      type: 'JSON',
      description: 'Structured payload; `data.sessionId` sets the session (default: source.stream).',
    }),
    assertions: t.field({ type: [AssertionInputRef] }),
    provenance: t.field({ type: 'JSON', description: '`{uri, …}`: a link to the original event.' }),
  }),
});
