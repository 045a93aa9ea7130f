import type { Neighbor } from '../graph-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { FactRef } from '../../../kernel/schema/fact.js';

export const NeighborRef = builder.objectRef<Neighbor>('Neighbor').implement({
  description: 'An entity near another one, with how far it is and the fact it was reached through.',
  fields: (t) => ({
    entity: t.field({ type: EntityRef, resolve: (n) => n.entity }),
    distance: t.exposeInt('distance', { description: 'Hops from the entity asked about (1 or 2).' }),
    via: t.field({
      type: FactRef,
      description: 'The fact of the last hop: it has this neighbour as one endpoint.',
      resolve: (n) => n.via,
    }),
    through: t.field({
      type: EntityRef,
      nullable: true,
      description: 'For a distance-2 neighbour, the first-hop entity it was reached through.',
      resolve: (n) => n.through,
    }),
  }),
});
