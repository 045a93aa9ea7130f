import type { ResolvedEntityValue } from '../router/route-value.js';
import { builder } from '../../../kernel/schema/builder.js';

export const ResolvedEntityRef = builder.objectRef<ResolvedEntityValue>('ResolvedEntity').implement({
  description: 'An entity hint of the query and the entity it resolved to.',
  fields: (t) => ({
    hint: t.exposeString('hint'),
    namespace: t.exposeString('namespace'),
    key: t.exposeString('key'),
    title: t.exposeString('title'),
    matchedBy: t.exposeString('matchedBy', { description: 'KEY, TITLE, ALIAS or TRIGRAM.' }),
  }),
});
