import type { ScoreSignals } from '../compiler/signals.js';
import { builder } from '../../../kernel/schema/builder.js';
import { ChannelRankRef } from './channel-rank.js';

export const ScoreSignalsRef = builder.objectRef<ScoreSignals>('ScoreSignals').implement({
  description:
    'Every term of an item’s score: weighted RRF over the channels that found it plus the tie-break bonuses. ' +
    'RRF values are for ordering only, never a confidence.',
  fields: (t) => ({
    rrf: t.exposeFloat('rrf', { description: 'Σ weight / (rrfK + rank + 1) over the channels below.' }),
    channels: t.field({ type: [ChannelRankRef], resolve: (s) => s.channels }),
    exactId: t.exposeFloat('exactId', {
      description: '+0.010 when the item matches an identifier of the query.',
    }),
    entity: t.float({
      description:
        '+0.004 when the item is linked (actor, subject or a mention in its text) to an entity the query names ' +
        'by title, alias or key.',
      // Traces written before this signal existed carry no value: 0.
      resolve: (s) => s.entity ?? 0,
    }),
    entities: t.stringList({
      description: 'Keys of the entities the query names that the item is linked to.',
      resolve: (s) => s.entities ?? [],
    }),
    scope: t.exposeFloat('scope', { description: '+0.004 when the item carries a requested scope.' }),
    current: t.exposeFloat('current', { description: '+0.003 for a fact whose interval is still open.' }),
    evidence: t.exposeFloat('evidence', { description: '+0.002 per evidence rank of a fact (ASSERTED 3).' }),
    freshness: t.exposeFloat('freshness', {
      description: 'Up to +0.005, halving every 14 days of age (asOf, or now); none for a document link.',
    }),
    label: t.float({
      description:
        '+0.00026 (one rank step at the top) when the item’s title or heading holds a word of the query — for an ' +
        'observation, its actor’s name.',
      resolve: (s) => s.label ?? 0,
    }),
    terms: t.float({
      description:
        'Up to +0.00053 (two rank steps): the share of the query’s distinctive words (weighed by how rare they are ' +
        'among the candidates) that the item’s own text holds, beyond the neighbouring turns it is indexed with.',
      resolve: (s) => s.terms ?? 0,
    }),
    asking: t.float({
      description:
        '−0.00053 (two rank steps) when the item’s own text ends with a question: a turn that asks holds the ' +
        'query’s words but seldom the answer.',
      resolve: (s) => s.asking ?? 0,
    }),
    state: t.float({
      description:
        'The CURRENT_STATE section’s order: 1 for its first item (what holds at asOf for an entity the query ' +
        'names, best match of the question first), a thousandth less for each next; 0 for items ranked by the channels.',
      // Traces written before this signal existed carry no value: 0.
      resolve: (s) => s.state ?? 0,
    }),
    newer: t.exposeFloat('newer', {
      description:
        'Newer first on one topic: among observations that fit the query and name the same identifier of it, ' +
        'the newest takes the best score of the group, the next the second…; this is the move (0 elsewhere).',
    }),
  }),
});
