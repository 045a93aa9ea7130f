import type { WritePayload, WriteResult } from '../../services/batch.js';
import { builder } from '../builder.js';
import { WriteStatusEnum } from './enums.js';

export const WriteResultRef = builder.objectRef<WriteResult>('WriteResult').implement({
  description: 'The outcome of one item of a batch write; REJECTED items carry a code and a message.',
  fields: (t) => ({
    index: t.exposeInt('index'),
    status: t.field({ type: WriteStatusEnum, resolve: (r) => r.status }),
    id: t.id({ nullable: true, resolve: (r) => r.id ?? null }),
    key: t.string({ nullable: true, resolve: (r) => r.key ?? null }),
    code: t.string({ nullable: true, resolve: (r) => r.code ?? null }),
    message: t.string({ nullable: true, resolve: (r) => r.message ?? null }),
  }),
});

export const WritePayloadRef = builder.objectRef<WritePayload>('WritePayload').implement({
  fields: (t) => ({
    results: t.field({ type: [WriteResultRef], resolve: (p) => p.results }),
    accepted: t.exposeInt('accepted'),
    rejected: t.exposeInt('rejected'),
  }),
});
