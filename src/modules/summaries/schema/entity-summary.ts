import { ChunkRef } from '../../../kernel/schema/chunk.js';
import { builder } from '../../../kernel/schema/builder.js';
import { EvidenceEnum } from '../../../kernel/schema/enums.js';
import { FactRef } from '../../../kernel/schema/fact.js';
import { ObservationRef } from '../../../kernel/schema/observation.js';
import { nsKey } from '../../../kernel/loaders.js';
import type { EntitySummaryView } from '../summary-service.js';

export const EntitySummaryRef = builder.objectRef<EntitySummaryView>('EntitySummary').implement({
  description:
    'What memory knows about an entity at an instant, consolidated (evidence DERIVED): its attributes, its facts valid ' +
    'then grouped by predicate, and the latest notes that mention it. Never rests on a row the reader cannot see.',
  fields: (t) => ({
    text: t.exposeString('text'),
    evidence: t.field({ type: EvidenceEnum, resolve: () => 'DERIVED' as const }),
    asOf: t.field({
      type: 'DateTime',
      description: 'The instant it states what holds at.',
      resolve: (s) => s.asOf,
    }),
    builtAt: t.field({ type: 'DateTime', resolve: (s) => s.builtAt }),
    by: t.exposeString('by', {
      description: '"extractive" (the documented rule), or the model that wrote it.',
    }),
    stored: t.boolean({
      description: 'False when it was built on read (for an earlier asOf, or before the stored one exists).',
      resolve: (s) => s.chunkId !== null,
    }),
    stale: t.exposeBoolean('stale', {
      description: 'A change to its evidence is waiting to be summarised; the text is from before it.',
    }),
    chunk: t.field({
      type: ChunkRef,
      nullable: true,
      description: 'The stored summary as a chunk: what search finds, and where provenance walks start.',
      resolve: (s, _a, ctx) =>
        s.chunkId === null ? null : ctx.loaders.chunk.load(nsKey(s.namespace, String(s.chunkId))),
    }),
    facts: t.field({
      type: [FactRef],
      description: 'The facts it states (those the reader can still see).',
      resolve: async (s, _a, ctx) =>
        (await ctx.loaders.fact.loadMany(s.sources.facts.map((id) => nsKey(s.namespace, id)))).filter(
          (f) => f !== null && !(f instanceof Error),
        ) as Exclude<Awaited<ReturnType<typeof ctx.loaders.fact.load>>, null>[],
    }),
    observations: t.field({
      type: [ObservationRef],
      description: 'The observations it quotes (those the reader can still see).',
      resolve: async (s, _a, ctx) =>
        (
          await ctx.loaders.observation.loadMany(s.sources.observations.map((id) => nsKey(s.namespace, id)))
        ).filter((o) => o !== null && !(o instanceof Error)) as Exclude<
          Awaited<ReturnType<typeof ctx.loaders.observation.load>>,
          null
        >[],
    }),
  }),
});
