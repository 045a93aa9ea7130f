import type { AnswerModel } from '../search-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { SearchFiltersRef, SearchModeEnum } from './search-input.js';
import { SearchResultRef } from './search-result.js';
import { SourceRefRef } from '../../documents/schema/index.js';

export const AskInputRef = builder.inputType('AskInput', {
  fields: (t) => ({
    namespaces: t.stringList({ required: true }),
    question: t.string({ required: true }),
    k: t.int({ defaultValue: 8 }),
    synthesize: t.boolean({
      defaultValue: true,
      description: 'False: only search (answer is empty); use `search.context` with your own model.',
    }),
    mode: t.field({ type: SearchModeEnum, defaultValue: 'HYBRID' }),
    hops: t.int({ defaultValue: 1 }),
    filters: t.field({ type: SearchFiltersRef }),
    rerank: t.boolean({ defaultValue: false }),
  }),
});

export const AnswerRef = builder.objectRef<AnswerModel>('Answer').implement({
  description: 'A search and, when asked, an answer synthesised from its context with numbered citations.',
  fields: (t) => ({
    question: t.exposeString('question'),
    answer: t.string({
      description:
        'The model’s answer citing fragments as [n]; a fixed "no data" text when nothing was found; with no ' +
        'model configured (echo) or when the model failed, the context itself, marked as such.',
      resolve: (a) => a.answer,
    }),
    synthesized: t.exposeBoolean('synthesized', { description: 'True only when a model wrote the answer.' }),
    model: t.string({ nullable: true, resolve: (a) => a.model }),
    citations: t.field({
      type: [SourceRefRef],
      description:
        'The sources of the fragments the answer cites ([n] → the n-th hit), in order of citation.',
      resolve: (a) => a.citations,
    }),
    search: t.field({ type: SearchResultRef, resolve: (a) => a.search }),
  }),
});

builder.queryFields((t) => ({
  ask: t.field({
    type: AnswerRef,
    description: 'Search, then an answer with citations (temperature 0.1, 25 s timeout).',
    args: { input: t.arg({ type: AskInputRef, required: true }) },
    resolve: (_root, args, ctx) => ctx.services.search.ask(args.input),
  }),
}));
