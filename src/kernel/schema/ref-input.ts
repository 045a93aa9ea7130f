import { builder } from './builder.js';

export const RefInputRef = builder.inputType('RefInput', {
  description: 'A typed reference to something outside memgate (a user, a ticket…).',
  fields: (t) => ({
    type: t.string({ required: true }),
    id: t.string({ required: true }),
  }),
});
