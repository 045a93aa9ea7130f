import type { LazyPage } from '../pagination.js';
import type { FactRow } from '../store/fact-store.js';
import { builder } from './builder.js';
import { lazyTotal } from './connection-helpers.js';
import { FactRef } from './fact.js';

/** Entity.facts pages; totalCount costs one batched statement, only when asked for. */
export const FactConnectionRef = builder.connectionObject(
  {
    type: FactRef,
    name: 'FactConnection',
    fields: (t) => ({
      totalCount: t.int({ nullable: true, resolve: (c) => lazyTotal(c as LazyPage<FactRow>) }),
    }),
  },
  { name: 'FactEdge' },
);
