import { builder } from '../../../kernel/schema/builder.js';
import { EvidenceEnum } from '../../../kernel/schema/enums.js';

export const FactInputRef = builder.inputType('FactInput', {
  description:
    'subject —predicate→ object, true during [validFrom, validTo). Endpoints that do not exist yet become ' +
    'placeholders. `attributes.contradicts` (a fact id or a list of them) marks an explicit contradiction: ' +
    'both facts are kept and flagged as conflicting.',
  fields: (t) => ({
    subject: t.string({ required: true }),
    predicate: t.string({ required: true }),
    object: t.string({ required: true }),
    validFrom: t.field({
      type: 'DateTime',
      description:
        'Default: now (assertFacts, supersedeFact) or the observation’s occurredAt (assertions). Without it, ' +
        'an ACTIVE fact with the same subject, predicate and object still in force is reinforced.',
    }),
    validTo: t.field({ type: 'DateTime' }),
    evidence: t.field({ type: EvidenceEnum, defaultValue: 'ASSERTED' }),
    confidence: t.float({ defaultValue: 1.0 }),
    observationIds: t.stringList({
      description:
        'Recorded observations this fact rests on; each must exist and be visible to you (else NOT_FOUND).',
    }),
    sourcePath: t.string(),
    scopes: t.stringList(),
    attributes: t.field({ type: 'JSON' }),
  }),
});
