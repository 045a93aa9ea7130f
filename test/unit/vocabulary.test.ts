import { type GraphQLEnumType, type GraphQLInputObjectType, getNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  channelWeightsSchema,
  fusionWeights,
  resolveSettings,
} from '../../src/modules/retrieval/pipeline/settings.js';
import {
  CHANNELS,
  CONTEXT_DEFAULTS,
  CONTEXT_STRATEGIES,
  DEFAULT_WEIGHTS,
  RECALL_BUDGETS,
  SEARCH_DEFAULTS,
  SEARCH_MODES,
} from '../../src/modules/retrieval/pipeline/vocabulary.js';
import { schema } from '../../src/schema/index.js';

// One vocabulary: the GraphQL enums and inputs, the zod schemas and the settings are all
// derived from src/modules/retrieval/pipeline/vocabulary.ts.

const enumValues = (name: string) =>
  (schema.getType(name) as GraphQLEnumType).getValues().map((v) => v.value as string);

describe('the retrieval vocabulary', () => {
  it('is what the GraphQL enums list', () => {
    expect(enumValues('SearchMode')).toEqual([...SEARCH_MODES]);
    expect(enumValues('ContextStrategy')).toEqual([...CONTEXT_STRATEGIES, 'AUTO']);
    expect(enumValues('RecallBudget')).toEqual(Object.keys(RECALL_BUDGETS));
  });

  it('names every channel in ChannelWeights and its zod schema', () => {
    const input = schema.getType('ChannelWeights') as GraphQLInputObjectType;
    expect(Object.keys(input.getFields()).sort()).toEqual([...CHANNELS].sort());
    expect(Object.keys(channelWeightsSchema.shape).sort()).toEqual([...CHANNELS].sort());
    expect(() => channelWeightsSchema.parse({ nonsense: 1 })).toThrow();
  });

  it('gives the GraphQL defaults and the settings their values', () => {
    const search = schema.getType('SearchInput') as GraphQLInputObjectType;
    expect(search.getFields().k!.defaultValue).toBe(SEARCH_DEFAULTS.k);
    expect(search.getFields().hops!.defaultValue).toBe(SEARCH_DEFAULTS.hops);
    expect(search.getFields().rrfK!.defaultValue).toBe(SEARCH_DEFAULTS.rrfK);
    const context = schema.getType('ContextInput') as GraphQLInputObjectType;
    expect(context.getFields().budgetTokens!.defaultValue).toBe(CONTEXT_DEFAULTS.budgetTokens);
    expect(getNamedType(context.getFields().strategy!.type).name).toBe('ContextStrategy');
    const { vector: _v, ...weights } = fusionWeights(resolveSettings({ embedderModel: 'openai:x' }));
    expect(weights).toEqual({
      lexical: DEFAULT_WEIGHTS.lexical,
      exact: DEFAULT_WEIGHTS.exact,
      graph: DEFAULT_WEIGHTS.graph,
    });
  });
});
