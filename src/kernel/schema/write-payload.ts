import type { WritePayload, WriteResult } from '../batch.js';
import { builder } from './builder.js';
import { AssertionResultRef } from './assertion-result.js';
import { WriteStatusEnum } from './enums.js';

export const WriteResultRef = builder.objectRef<WriteResult>('WriteResult').implement({
  description:
    'The outcome of one item of a batch write; REJECTED items carry a code and a message. PARTIAL: the item was stored but part of it was rejected (an observation kept as evidence with some or all assertions rejected; see assertions).',
  fields: (t) => ({
    index: t.exposeInt('index'),
    status: t.field({ type: WriteStatusEnum, resolve: (r) => r.status }),
    id: t.id({ nullable: true, resolve: (r) => r.id ?? null }),
    key: t.string({ nullable: true, resolve: (r) => r.key ?? null }),
    code: t.string({ nullable: true, resolve: (r) => r.code ?? null }),
    message: t.string({ nullable: true, resolve: (r) => r.message ?? null }),
    assertions: t.field({
      type: [AssertionResultRef],
      nullable: true,
      description:
        'One result per assertion, in input order, for an observation that had assertions; null otherwise.',
      resolve: (r) => r.assertions ?? null,
    }),
  }),
});

export const WritePayloadRef = builder.objectRef<WritePayload>('WritePayload').implement({
  fields: (t) => ({
    results: t.field({ type: [WriteResultRef], resolve: (p) => p.results }),
    accepted: t.exposeInt('accepted', { description: 'Items written in full (not PARTIAL, not REJECTED).' }),
    partial: t.exposeInt('partial', { description: 'Items stored with part of them rejected (PARTIAL).' }),
    rejected: t.exposeInt('rejected'),
  }),
});
