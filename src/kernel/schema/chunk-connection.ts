import type { LazyPage } from '../pagination.js';
import type { ChunkRow } from '../store/chunk-store.js';
import { builder } from './builder.js';
import { ChunkRef } from './chunk.js';
import { lazyTotal } from './connection-helpers.js';

export const ChunkConnectionRef = builder.connectionObject(
  {
    type: ChunkRef,
    name: 'ChunkConnection',
    fields: (t) => ({
      totalCount: t.int({ nullable: true, resolve: (c) => lazyTotal(c as LazyPage<ChunkRow>) }),
    }),
  },
  { name: 'ChunkEdge' },
);
