import { nsKey } from '../loaders.js';
import type { ChunkRow } from '../store/chunk-store.js';
import { builder } from './builder.js';
import { EntityRef } from './entity.js';
import { loadNodes } from './node-loading.js';
import { ObservationRef } from './observation.js';

export const ChunkRef = builder.objectRef<ChunkRow>('Chunk');

builder.node(ChunkRef, {
  description: 'A searchable piece of text owned by an entity.',
  id: { resolve: (c) => JSON.stringify([c.namespace, Number(c.chunkId)]) },
  loadMany: (ids, ctx) => loadNodes(ids, ctx, (k) => ctx.loaders.chunk.load(k)),
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    node: t.field({
      type: EntityRef,
      resolve: async (c, _a, ctx) => {
        const owner = await ctx.loaders.entity.load(nsKey(c.namespace, c.nodeKey));
        if (!owner) throw new Error(`chunk ${c.chunkId} has no visible owner`);
        return owner;
      },
    }),
    order: t.exposeInt('order'),
    title: t.string({ nullable: true, resolve: (c) => c.title }),
    heading: t.string({ nullable: true, resolve: (c) => c.heading }),
    text: t.exposeString('text'),
    sourcePath: t.string({ nullable: true, resolve: (c) => c.sourcePath }),
    meta: t.field({ type: 'JSON', resolve: (c) => c.meta }),
    kind: t.exposeString('kind'),
    occurredAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.occurredAt }),
    observation: t.field({
      type: ObservationRef,
      nullable: true,
      description: 'The observation this text came from, if any.',
      resolve: (c, _a, ctx) =>
        c.observationId ? ctx.loaders.observation.load(nsKey(c.namespace, c.observationId)) : null,
    }),
  }),
});
