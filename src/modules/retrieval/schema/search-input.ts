import {
  CHANNELS,
  type ChannelName,
  DEFAULT_RECALL_BUDGET,
  RECALL_BUDGETS,
  type RecallBudget,
  SEARCH_DEFAULTS,
  SEARCH_MODES,
} from '../pipeline/vocabulary.js';
import { builder } from '../../../kernel/schema/builder.js';

export const SearchModeEnum = builder.enumType('SearchMode', {
  description:
    'Which channels rank the hits: all of them, only embeddings, or only BM25 + exact identifiers.',
  values: SEARCH_MODES,
});

export const RecallBudgetEnum = builder.enumType('RecallBudget', {
  description: 'How many fragments `recall` returns: LOW 4, MID 8, HIGH 16.',
  values: Object.keys(RECALL_BUDGETS) as RecallBudget[],
});

const WEIGHT_DESCRIPTIONS: Partial<Record<ChannelName, string>> = {
  exact: 'Identifier-like tokens of the query matched literally (trigram index).',
  facts: 'Used by the context compiler; search has no facts channel.',
  recent: 'Used by the context compiler; search has no recent channel.',
};

export const ChannelWeightsRef = builder.inputType('ChannelWeights', {
  description:
    'Weighted RRF: a hit scores Σ weight / (rrfK + rank + 1) over the channels that found it. Unset weights ' +
    'keep their defaults (vector fitted to the configured embedder, lexical 1.0, exact 1.0, graph 0.7).',
  fields: (t) =>
    Object.fromEntries(
      CHANNELS.map((c) => [
        c,
        t.float(WEIGHT_DESCRIPTIONS[c] ? { description: WEIGHT_DESCRIPTIONS[c] } : {}),
      ]),
    ) as Record<ChannelName, ReturnType<typeof t.float>>,
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
    k: t.int({ defaultValue: SEARCH_DEFAULTS.k, description: 'Hits returned, 1–100.' }),
    mode: t.field({ type: SearchModeEnum, defaultValue: SEARCH_DEFAULTS.mode }),
    hops: t.int({
      defaultValue: SEARCH_DEFAULTS.hops,
      description: 'Graph neighbours of the top hits: 0 (none) to 2 hops.',
    }),
    filters: t.field({ type: SearchFiltersRef }),
    asOf: t.field({
      type: 'DateTime',
      description:
        'What memory held at this instant (default now): hits are observations that occurred by then and ' +
        'documents written by then; graph neighbours come through facts valid then whose evidence was there ' +
        'by then (see ContextInput.asOf).',
    }),
    weights: t.field({ type: ChannelWeightsRef }),
    rrfK: t.int({ defaultValue: SEARCH_DEFAULTS.rrfK }),
    rerank: t.boolean({
      defaultValue: SEARCH_DEFAULTS.rerank,
      description:
        'One LLM call scores the pool 0–100; on any failure the fused order stays and rerankScore is null.',
    }),
  }),
});

export const RecallInputRef = builder.inputType('RecallInput', {
  fields: (t) => ({
    namespaces: t.stringList({ required: true }),
    query: t.string({ required: true }),
    budget: t.field({ type: RecallBudgetEnum, defaultValue: DEFAULT_RECALL_BUDGET }),
  }),
});
