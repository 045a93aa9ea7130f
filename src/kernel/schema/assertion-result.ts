import type { AssertionResult } from '../batch.js';
import { builder } from './builder.js';

export const AssertionStatusEnum = builder.enumType('AssertionStatus', {
  values: ['APPLIED', 'REJECTED'] as const,
});

export const AssertionResultRef = builder.objectRef<AssertionResult>('AssertionResult').implement({
  description:
    'The outcome of one assertion of a recorded observation; REJECTED ones carry a code and a message.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: "Position in the observation's assertions." }),
    kind: t.exposeString('kind', { description: 'entity, fact, episode…' }),
    status: t.field({ type: AssertionStatusEnum, resolve: (a) => a.status }),
    code: t.string({ nullable: true, resolve: (a) => a.code ?? null }),
    message: t.string({ nullable: true, resolve: (a) => a.message ?? null }),
  }),
});
