import type { EntityRow } from '../store/entity-store.js';
import type { LazyPage } from '../pagination.js';
import { builder } from './builder.js';
import { connectionNodeFields, entitySelection } from './entity-selection.js';
import { lazyTotal } from './connection-helpers.js';
import { OriginEnum } from './enums.js';
import { loadNodes } from './node-loading.js';

export const EntityRef = builder.objectRef<EntityRow>('Entity');

builder.node(EntityRef, {
  description: 'A typed thing in the graph, identified by (namespace, key).',
  id: { resolve: (e) => JSON.stringify([e.namespace, e.key]) },
  loadMany: (ids, ctx) => loadNodes(ids, ctx, (k) => ctx.loaders.entity.load(k)),
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    key: t.exposeString('key'),
    kind: t.exposeString('kind'),
    title: t.exposeString('title'),
    sourcePath: t.string({ nullable: true, resolve: (e) => e.sourcePath }),
    confidence: t.float({ nullable: true, resolve: (e) => e.confidence }),
    origin: t.field({ type: OriginEnum, resolve: (e) => e.origin }),
    scopes: t.exposeStringList('scopes'),
    lastSeen: t.field({ type: 'DateTime', nullable: true, resolve: (e) => e.lastSeen }),
    placeholder: t.exposeBoolean('placeholder', {
      description: 'True while only facts have named this key and no entity write has filled it in.',
    }),
    stale: t.exposeBoolean('stale', { description: 'True when a snapshot of its scope no longer lists it.' }),
  }),
});

export const EntityConnectionRef = builder.connectionObject(
  {
    type: EntityRef,
    name: 'EntityConnection',
    fields: (t) => ({
      totalCount: t.int({ nullable: true, resolve: (c) => lazyTotal(c as LazyPage<EntityRow>) }),
    }),
  },
  { name: 'EntityEdge' },
);

builder.queryFields((t) => ({
  entity: t.field({
    type: EntityRef,
    nullable: true,
    args: { namespace: t.arg.string({ required: true }), key: t.arg.string({ required: true }) },
    // The entity and the relations selected under it (facts → endpoints → facts…) in one statement.
    resolve: (_root, args, ctx, info) =>
      ctx.services.entities.get(args.namespace, args.key, entitySelection(info)),
  }),
  entities: t.field({
    type: EntityConnectionRef,
    args: {
      namespace: t.arg.string({ required: true }),
      kinds: t.arg.stringList({
        description:
          'Only these kinds. Without it every kind but "observation" is listed: observation nodes appear only when named here.',
      }),
      keyPrefix: t.arg.string(),
      first: t.arg.int({ defaultValue: 20 }),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    // Each row is read with the columns its selected fields need.
    resolve: (_root, args, ctx, info) =>
      ctx.services.entities.list(
        args.namespace,
        { kinds: args.kinds, keyPrefix: args.keyPrefix },
        {
          first: args.last != null ? null : args.first,
          after: args.after,
          last: args.last,
          before: args.before,
        },
        connectionNodeFields(info),
      ),
  }),
}));
