import type { PackedItem } from '../compiler/compile.js';
import { builder } from '../../../kernel/schema/builder.js';
import { ProvenanceRef } from '../../graph/schema/index.js';
import { ScoreSignalsRef } from './score-signals.js';

export const ContextItemRef = builder.objectRef<PackedItem>('ContextItem').implement({
  description: 'One packed item, explained: what it is, why it scored, what it costs and what it rests on.',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: '"fact" | "chunk" | "observation" | "entity" | "current"' }),
    id: t.id({
      description:
        'Relay id of the fact, chunk, observation or entity (node(id) and provenance(id) work on it); "current" for CURRENT.',
      resolve: (i) => i.id,
    }),
    namespace: t.string({ nullable: true, resolve: (i) => i.namespace }),
    text: t.exposeString('text'),
    title: t.string({ nullable: true, resolve: (i) => i.title }),
    sourcePath: t.string({ nullable: true, resolve: (i) => i.sourcePath }),
    score: t.exposeFloat('score', { description: 'rrf + bonuses; for ordering only.' }),
    signals: t.field({ type: ScoreSignalsRef, resolve: (i) => i.signals }),
    tokenEstimate: t.exposeInt('tokenEstimate', {
      description: 'What the item costs in the budget: its rendered block, ceil(chars / charsPerToken).',
    }),
    conflict: t.exposeBoolean('conflict', {
      description: 'A fact in an open conflict: every version is in the pack, each marked.',
    }),
    provenance: t.field({
      type: ProvenanceRef,
      description: 'The chain down to the observation or document the item rests on.',
      resolve: async (i, _a, ctx) => {
        if (i.kind === 'current') return { steps: [], truncated: false };
        return ctx.services.provenance.provenance(i.id);
      },
    }),
  }),
});
