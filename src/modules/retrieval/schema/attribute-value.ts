import type { AttributeValue } from '../router/route-value.js';
import { builder } from '../../../kernel/schema/builder.js';

export const AttributeValueRef = builder.objectRef<AttributeValue>('AttributeValue').implement({
  description: "An entity attribute as of the request's asOf, with the attribute version it came from.",
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    entityKey: t.exposeString('entityKey'),
    entityTitle: t.exposeString('entityTitle'),
    name: t.exposeString('name', { description: 'The attribute key as stored.' }),
    value: t.field({ type: 'JSON', resolve: (a) => a.value as never }),
    validFrom: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.validFrom }),
    validTo: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.validTo }),
    observationId: t.string({
      nullable: true,
      description: 'The observation that set this attribute version (provenance).',
      resolve: (a) => a.observationId,
    }),
  }),
});
