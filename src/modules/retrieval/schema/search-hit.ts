import type { SearchHitResult } from '../pipeline/search.js';
import { builder } from '../../../kernel/schema/builder.js';
import { ChannelRankRef } from './channel-rank.js';
import { ChunkRef } from '../../../kernel/schema/chunk.js';
import { ScoreSignalsRef } from './score-signals.js';

export const SearchHitRef = builder.objectRef<SearchHitResult>('SearchHit').implement({
  description: 'A found fragment, with how each channel ranked it.',
  fields: (t) => ({
    chunk: t.field({ type: ChunkRef, resolve: (h) => h.chunk }),
    score: t.float({
      description: 'Fused score: weighted RRF plus bonuses. Orders hits; it is not a confidence.',
      resolve: (h) => h.score,
    }),
    rrf: t.float({ description: 'The weighted RRF part of score.', resolve: (h) => h.rrf }),
    exactIdBonus: t.float({
      description: 'The exact-identifier bonus (0.010) when the text contains an identifier of the query.',
      resolve: (h) => h.exactIdBonus,
    }),
    entityBonus: t.float({
      description:
        'The entity-name bonus (0.004) when the hit’s observation is linked to an entity the query names.',
      resolve: (h) => h.entityBonus,
    }),
    signals: t.field({
      type: ScoreSignalsRef,
      description:
        'Every term of score, as context items report them: search adds the exact-identifier, entity-name, ' +
        'label and own-terms bonuses and the asking penalty to RRF (the other bonuses are the context compiler’s and are 0 here).',
      resolve: (h) => ({
        rrf: h.rrf,
        channels: h.channels,
        exactId: h.exactIdBonus,
        entity: h.entityBonus,
        entities: h.namedEntities,
        scope: 0,
        current: 0,
        evidence: 0,
        freshness: 0,
        label: h.labelBonus,
        terms: h.termsBonus,
        asking: h.askingPenalty,
        newer: 0,
        state: 0,
      }),
    }),
    rerankScore: t.float({
      nullable: true,
      description: 'LLM relevance 0–1 when rerank ran and succeeded; null otherwise. Usable as a confidence.',
      resolve: (h) => h.rerankScore,
    }),
    channels: t.field({ type: [ChannelRankRef], resolve: (h) => h.channels }),
  }),
});
