import type { ObservationRow } from '../store/observation-store.js';
import { builder } from './builder.js';
import { ObservationStatusEnum } from './enums.js';
import { loadNodes } from './node-loading.js';
import { RefRef } from './ref.js';
import { SourceIdentityRef } from './source-identity.js';

export const ObservationRef = builder.objectRef<ObservationRow>('Observation');

builder.node(ObservationRef, {
  description: 'An immutable record of what an outside source reported.',
  id: { resolve: (o) => JSON.stringify([o.namespace, o.observationId]) },
  loadMany: (ids, ctx) => loadNodes(ids, ctx, (k) => ctx.loaders.observation.load(k)),
  fields: (t) => ({
    observationId: t.exposeString('observationId'),
    namespace: t.exposeString('namespace'),
    source: t.field({
      type: SourceIdentityRef,
      resolve: (o) => ({ system: o.sourceSystem, stream: o.sourceStream, externalId: o.sourceExternalId }),
    }),
    kind: t.exposeString('kind'),
    occurredAt: t.field({ type: 'DateTime', resolve: (o) => o.occurredAt }),
    recordedAt: t.field({ type: 'DateTime', resolve: (o) => o.recordedAt }),
    actor: t.field({
      type: RefRef,
      nullable: true,
      resolve: (o) => (o.actorType && o.actorId ? { type: o.actorType, id: o.actorId } : null),
    }),
    subject: t.field({
      type: RefRef,
      nullable: true,
      resolve: (o) => (o.subjectType && o.subjectId ? { type: o.subjectType, id: o.subjectId } : null),
    }),
    scopes: t.exposeStringList('scopes'),
    content: t.string({ nullable: true, resolve: (o) => o.content }),
    data: t.field({ type: 'JSON', nullable: true, resolve: (o) => o.data ?? null }),
    provenance: t.field({ type: 'JSON', nullable: true, resolve: (o) => o.provenance ?? null }),
    status: t.field({ type: ObservationStatusEnum, resolve: (o) => o.status }),
    statusReason: t.string({ nullable: true, resolve: (o) => o.statusReason }),
    sessionId: t.string({ nullable: true, resolve: (o) => o.sessionId }),
  }),
});
