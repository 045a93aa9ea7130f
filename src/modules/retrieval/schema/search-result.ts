import type { SearchResultModel } from '../search-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { ChannelStatRef } from './channel-stat.js';
import { NeighborRef } from '../../graph/schema/index.js';
import { RerankReportRef } from './rerank-report.js';
import { SearchHitRef } from './search-hit.js';
import { RecallInputRef, SearchInputRef, SearchModeEnum } from './search-input.js';
import { SourceRefRef } from '../../documents/schema/index.js';

export const SearchResultRef = builder.objectRef<SearchResultModel>('SearchResult').implement({
  description: 'Hits, graph neighbours of the top hits, their sources, and the context ready for a prompt.',
  fields: (t) => ({
    hits: t.field({ type: [SearchHitRef], resolve: (r) => r.hits }),
    neighbors: t.field({ type: [NeighborRef], resolve: (r) => r.neighbors }),
    sources: t.field({
      type: [SourceRefRef],
      description: 'Deduplicated by node: the hits’ nodes first, then the neighbours.',
      resolve: (r) => r.sources,
    }),
    context: t.string({
      description:
        'Numbered fragments and related entities, untrusted text neutralised; empty when nothing was found.',
      resolve: (r) => r.context,
    }),
    mode: t.field({ type: SearchModeEnum, resolve: (r) => r.mode }),
    channelStats: t.field({ type: [ChannelStatRef], resolve: (r) => r.channelStats }),
    rerank: t.field({ type: RerankReportRef, resolve: (r) => r.rerank }),
    warnings: t.stringList({
      description:
        'One per channel that failed or timed out (`channel_failed: lexical (…)`): the hits are degraded, the search still answered.',
      resolve: (r) => r.warnings,
    }),
  }),
});

builder.queryFields((t) => ({
  search: t.field({
    type: SearchResultRef,
    description: 'Hybrid top-k: vector, BM25 and exact-identifier channels fused by weighted RRF.',
    args: { input: t.arg({ type: SearchInputRef, required: true }) },
    resolve: (_root, args, ctx) => ctx.services.search.search(args.input),
  }),
  recall: t.field({
    type: SearchResultRef,
    description:
      'The hybrid search sized by a budget (LOW 4, MID 8, HIGH 16 fragments); never calls a model.',
    args: { input: t.arg({ type: RecallInputRef, required: true }) },
    resolve: (_root, args, ctx) => ctx.services.search.recall(args.input),
  }),
}));
