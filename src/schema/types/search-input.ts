import { builder } from '../builder.js';

export const SearchModeEnum = builder.enumType('SearchMode', {
  description:
    'Which channels rank the hits: all of them, only embeddings, or only BM25 + exact identifiers.',
  values: ['HYBRID', 'VECTOR', 'LEXICAL'] as const,
});

export const RecallBudgetEnum = builder.enumType('RecallBudget', {
  description: 'How many fragments `recall` returns: LOW 4, MID 8, HIGH 16.',
  values: ['LOW', 'MID', 'HIGH'] as const,
});

export const ChannelWeightsRef = builder.inputType('ChannelWeights', {
  description:
    'Weighted RRF: a hit scores Σ weight / (rrfK + rank + 1) over the channels that found it. Unset weights ' +
    'keep their defaults (vector fitted to the configured embedder, lexical 1.0, exact 1.0, graph 0.7).',
  fields: (t) => ({
    vector: t.float(),
    lexical: t.float(),
    exact: t.float({ description: 'Identifier-like tokens of the query matched literally (trigram index).' }),
    graph: t.float(),
    facts: t.float({ description: 'Used by the context compiler; search has no facts channel.' }),
    recent: t.float({ description: 'Used by the context compiler; search has no recent channel.' }),
  }),
});

export const SearchFiltersRef = builder.inputType('SearchFilters', {
  description: 'Real WHERE predicates: a chunk outside them is never a candidate of any channel.',
  fields: (t) => ({
    meta: t.field({
      type: 'JSON',
      description: 'Containment: a hit matches when its meta contains every given pair.',
    }),
    kinds: t.stringList({
      description: 'Kinds of the chunks (their owner node kind, e.g. document, message).',
    }),
    scopes: t.stringList({ description: 'A hit matches when it carries at least one of these scopes.' }),
    since: t.field({
      type: 'DateTime',
      description: 'Inclusive lower bound on occurredAt (or creation time).',
    }),
    until: t.field({
      type: 'DateTime',
      description: 'Exclusive upper bound on occurredAt (or creation time).',
    }),
  }),
});

export const SearchInputRef = builder.inputType('SearchInput', {
  fields: (t) => ({
    namespaces: t.stringList({ required: true }),
    query: t.string({
      required: true,
      description:
        'Free text (any characters, up to 32 KB). Empty: a structural listing by the filters, newest first.',
    }),
    k: t.int({ defaultValue: 8, description: 'Hits returned, 1–100.' }),
    mode: t.field({ type: SearchModeEnum, defaultValue: 'HYBRID' }),
    hops: t.int({ defaultValue: 1, description: 'Graph neighbours of the top hits: 0 (none) to 2 hops.' }),
    filters: t.field({ type: SearchFiltersRef }),
    weights: t.field({ type: ChannelWeightsRef }),
    rrfK: t.int({ defaultValue: 60 }),
    rerank: t.boolean({
      defaultValue: false,
      description:
        'One LLM call scores the pool 0–100; on any failure the fused order stays and rerankScore is null.',
    }),
  }),
});

export const RecallInputRef = builder.inputType('RecallInput', {
  fields: (t) => ({
    namespaces: t.stringList({ required: true }),
    query: t.string({ required: true }),
    budget: t.field({ type: RecallBudgetEnum, defaultValue: 'MID' }),
  }),
});
