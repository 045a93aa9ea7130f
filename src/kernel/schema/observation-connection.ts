import type { LazyPage } from '../pagination.js';
import type { ObservationRow } from '../store/observation-store.js';
import { builder } from './builder.js';
import { lazyTotal } from './connection-helpers.js';
import { ObservationRef } from './observation.js';

export const ObservationConnectionRef = builder.connectionObject(
  {
    type: ObservationRef,
    name: 'ObservationConnection',
    fields: (t) => ({
      totalCount: t.int({ nullable: true, resolve: (c) => lazyTotal(c as LazyPage<ObservationRow>) }),
    }),
  },
  { name: 'ObservationEdge' },
);
