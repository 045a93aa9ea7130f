import type { ChannelHit } from '../pipeline/fusion.js';
import { builder } from '../../../kernel/schema/builder.js';

export const ChannelRankRef = builder.objectRef<ChannelHit>('ChannelRank').implement({
  description: "Where one channel ranked an item, and the channel's own raw score.",
  fields: (t) => ({
    channel: t.exposeString('channel', { description: 'vector, lexical, exact, graph, list…' }),
    rank: t.exposeInt('rank', { description: '0-based position in that channel’s list.' }),
    score: t.float({
      nullable: true,
      description: 'vector: 1 − cosine distance; lexical: BM25; exact: literal matches + trigram similarity.',
      resolve: (c) => c.score,
    }),
  }),
});
