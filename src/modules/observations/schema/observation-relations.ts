import { builder } from '../../../kernel/schema/builder.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { FactRef } from '../../../kernel/schema/fact.js';
import { ObservationRef } from '../../../kernel/schema/observation.js';

// Observation's relations, each through a per-request loader: one statement per nesting level.
builder.objectFields(ObservationRef, (t) => ({
  facts: t.field({
    type: [FactRef],
    description:
      'Facts this observation is evidence for, oldest validFrom first: every version it supports, ' +
      'superseded ones included (at most 200).',
    resolve: (o, _a, ctx) => ctx.services.graph.observationFacts(o),
  }),
  episodes: t.field({
    type: [EntityRef],
    description: 'The episode entities this observation gave rise to.',
    resolve: (o, _a, ctx) => ctx.services.graph.observationEpisodes(o),
  }),
}));
