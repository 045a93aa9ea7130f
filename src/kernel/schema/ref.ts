import { builder } from './builder.js';

export interface Ref {
  type: string;
  id: string;
}

export const RefRef = builder.objectRef<Ref>('Ref').implement({
  description: 'A typed reference to something outside memgate (a user, a ticket…).',
  fields: (t) => ({
    type: t.exposeString('type'),
    id: t.exposeString('id'),
  }),
});
