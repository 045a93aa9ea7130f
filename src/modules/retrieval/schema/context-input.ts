import { CONTEXT_DEFAULTS, CONTEXT_STRATEGIES } from '../pipeline/vocabulary.js';
import { builder } from '../../../kernel/schema/builder.js';
import { RefInputRef } from '../../../kernel/schema/ref-input.js';
import { ChannelWeightsRef } from './search-input.js';

// The strategy vocabulary belongs to this input (like SearchMode to SearchInput).
export const ContextStrategyEnum = builder.enumType('ContextStrategy', {
  description:
    'Which channels compile the pack: HYBRID all (vector, lexical + exact, facts, graph, recent); SEMANTIC vector; ' +
    'EXACT lexical + exact identifiers; GRAPH graph + facts; BRIEFING graph + facts + recent without a query; ' +
    'AUTO routes the query (see Query.route) to a handler: attribute lookup, paths, a time window, facet counts or HYBRID.',
  values: [...CONTEXT_STRATEGIES, 'AUTO'] as const,
});

export const ContextInputRef = builder.inputType('ContextInput', {
  description:
    'What an agent should know now: a query, anchors and scopes, its current state and a token budget.',
  fields: (t) => ({
    namespaces: t.stringList({ required: true, description: 'Knowledge bases to read (1–10).' }),
    query: t.string({ defaultValue: '', description: 'Free text; may be empty (BRIEFING ignores it).' }),
    scopes: t.stringList({
      description:
        'Relevance scopes (type:id, at most 10): items whose scopes intersect, plus unscoped ones.',
    }),
    anchors: t.stringList({
      description: 'Entity keys the graph and facts channels start from (at most 20).',
    }),
    subject: t.field({
      type: RefInputRef,
      description: 'Who the pack is for: the entity type:id (or id) anchors facts.',
    }),
    ephemeralContext: t.field({
      type: 'JSON',
      description: "The caller's current state: rendered first as the CURRENT section and never stored.",
    }),
    budgetTokens: t.int({
      defaultValue: CONTEXT_DEFAULTS.budgetTokens,
      description:
        'Positive integer; the rendered text never exceeds it (estimate = ceil(chars / charsPerToken)).',
    }),
    strategy: t.field({ type: ContextStrategyEnum, defaultValue: CONTEXT_DEFAULTS.strategy }),
    asOf: t.field({
      type: 'DateTime',
      description:
        'What memory held at this instant (default now): observations that occurred by then, documents and ' +
        'other chunks written by then, facts valid then whose evidence was there by then (a fact drawn from ' +
        'observations needs one that occurred by then) — an end date after it is not shown, the fact reads ' +
        'as open. Freshness is measured from it. Retracted facts are never served.',
    }),
    k: t.int({
      defaultValue: CONTEXT_DEFAULTS.k,
      description: 'Target size of each channel (1–64); a channel returns at most 64.',
    }),
    maxDistance: t.float({
      description:
        'Recall floor on cosine distance to the query (0–2); unset = off. Items farther away are dropped ' +
        '(BELOW_RELEVANCE_FLOOR); a pack emptied only by it has emptyReason "no_relevant_memory".',
    }),
    weights: t.field({ type: ChannelWeightsRef, description: 'RRF weight overrides per channel.' }),
  }),
});
