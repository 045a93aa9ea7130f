import type { SnapshotReconciliation } from '../snapshot-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';

const SnapshotEntityInputRef = builder.inputType('SnapshotEntityInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    kind: t.string({ required: true }),
    title: t.string({ description: 'Default: the stored title, or the key.' }),
    attributes: t.field({
      type: 'JSON',
      description:
        'The whole attribute set (keys it lacks are removed); omitted = attributes left as they are.',
    }),
    scopes: t.stringList(),
    sourcePath: t.string(),
  }),
});

const SnapshotRelationInputRef = builder.inputType('SnapshotRelationInput', {
  fields: (t) => ({
    subject: t.string({ required: true }),
    relation: t.string({ required: true, description: 'The predicate (a domain pack relation).' }),
    object: t.string({ required: true }),
    attributes: t.field({ type: 'JSON' }),
    scopes: t.stringList(),
    sourcePath: t.string(),
  }),
});

const SnapshotInputRef = builder.inputType('SnapshotInput', {
  description: "A source's full list of entities and relations for one scope at one time.",
  fields: (t) => ({
    snapshotId: t.string({
      required: true,
      description: 'This snapshot (a commit, an export id); immutable.',
    }),
    scope: t.string({
      required: true,
      description: 'The stable name of what the source covers (e.g. service:payments).',
    }),
    source: t.string({ description: 'The system that produced it.' }),
    observedAt: t.field({ type: 'DateTime', required: true, description: 'When the snapshot was true.' }),
    entities: t.field({ type: [SnapshotEntityInputRef], required: true }),
    relations: t.field({ type: [SnapshotRelationInputRef] }),
  }),
});

export const SnapshotReconciliationRef = builder
  .objectRef<SnapshotReconciliation>('SnapshotReconciliation')
  .implement({
    description:
      'What a snapshot changed: per-item results, the relations it closed and the entities it marked stale.',
    fields: (t) => ({
      namespace: t.exposeString('namespace'),
      snapshotId: t.exposeString('snapshotId'),
      scope: t.exposeString('scope'),
      observedAt: t.field({ type: 'DateTime', resolve: (r) => r.observedAt }),
      replayed: t.exposeBoolean('replayed', {
        description: 'An older, already reconciled snapshot was re-sent: nothing was applied.',
      }),
      entities: t.field({ type: WritePayloadRef, resolve: (r) => r.entities }),
      relations: t.field({ type: WritePayloadRef, resolve: (r) => r.relations }),
      closedRelations: t.exposeStringList('closedRelations', {
        description: 'Fact ids whose validity ended at observedAt.',
      }),
      staleEntities: t.exposeStringList('staleEntities', { description: 'Entity keys marked stale.' }),
    }),
  });

builder.mutationFields((t) => ({
  reconcileSnapshot: t.field({
    type: SnapshotReconciliationRef,
    description:
      "Makes the graph agree with a source's full snapshot of one scope: creates and updates what it lists, closes the relations and marks stale the entities of that scope it no longer lists. Re-sending it changes nothing.",
    args: {
      namespace: t.arg.string({ required: true }),
      snapshot: t.arg({ type: SnapshotInputRef, required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.snapshots.reconcile(args.namespace, args.snapshot),
  }),
}));
