import { GraphQLInputObjectType, GraphQLList, GraphQLNonNull, GraphQLString, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  documentNesting,
  inspectInput,
  jsonDepthExceeds,
  operationAliases,
  operationCost,
  operationDepth,
} from '../../src/security/limits.js';
import { schema } from '../../src/schema/index.js';

const op = (text: string) => {
  const document = parse(text);
  const operation = document.definitions.find((d) => d.kind === 'OperationDefinition')!;
  return { document, operation: operation as Extract<typeof operation, { kind: 'OperationDefinition' }> };
};

describe('documentNesting', () => {
  it('counts { ( [ outside strings, block strings and comments', () => {
    expect(documentNesting('{ a { b(x: [1]) } }', 100)).toBe(4);
    expect(documentNesting('{ a(x: "{{{{[[[[") }', 100)).toBe(2);
    expect(documentNesting('{ a(x: """ {{{ " {{ """) }', 100)).toBe(2);
    expect(documentNesting('{ a # {{{{{\n }', 100)).toBe(1);
    expect(documentNesting('{ a(x: "\\" {{{{") }', 100)).toBe(2);
  });
  it('stops as soon as the limit is passed', () => {
    expect(documentNesting(`${'['.repeat(1_000_000)}`, 64)).toBe(65);
  });
});

describe('jsonDepthExceeds', () => {
  it('measures objects and arrays iteratively', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonDepthExceeds(deep, 64)).toBe(true);
    expect(jsonDepthExceeds({ a: { b: [1, { c: 2 }] } }, 4)).toBe(false);
    expect(jsonDepthExceeds({ a: { b: [1, { c: 2 }] } }, 3)).toBe(true);
    expect(jsonDepthExceeds('scalar', 0)).toBe(false);
  });
});

describe('depth and aliases', () => {
  it('follows fragments once each and ignores introspection', () => {
    const { document, operation } = op(`
      query { a: entity(namespace: "n", key: "k") { ...F } b: entity(namespace: "n", key: "k") { ...F }
              __schema { types { fields { type { ofType { ofType { name } } } } } } }
      fragment F on Entity { k1: key facts { edges { node { factId } } } }`);
    expect(operationDepth(document, operation)).toBe(5);
    expect(operationAliases(document, operation)).toBe(4);
  });
  it('survives fragment cycles (graphql reports them)', () => {
    const { document, operation } = op(
      'query { entity(namespace: "n", key: "k") { ...A } } fragment A on Entity { ...B } fragment B on Entity { ...A key }',
    );
    expect(operationDepth(document, operation)).toBe(2);
  });
});

describe('operationCost', () => {
  it('multiplies lists by their page size, inherited by edges from the connection', () => {
    const { document, operation } = op(
      'query($n: Int) { entities(namespace: "n", first: $n) { edges { node { facts(first: 5) { edges { node { factId } } } } } } }',
    );
    // entities 1 + edges n × (1 + node 1 + facts 1 + edges 5 × (1 + node 1)) = 1 + n × 13
    expect(operationCost(schema, document, operation, { n: 10 })).toBe(1 + 10 * 13);
    expect(operationCost(schema, document, operation, { n: 100 })).toBe(1 + 100 * 13);
  });
  it('prices the example SECURITY.md works through', () => {
    const { document, operation } = op(
      '{ entities(namespace: "n", first: 20) { edges { node { facts(first: 20) { edges { node { subject { key } } } } } } } }',
    );
    expect(operationCost(schema, document, operation, {})).toBe(1261);
  });
  it('uses the length of ids and a default for unsized lists; scalars are free', () => {
    const { document, operation } = op('query($ids: [ID!]!) { nodes(ids: $ids) { id } }');
    expect(operationCost(schema, document, operation, { ids: ['a', 'b', 'c'] })).toBe(3);
  });
});

describe('inspectInput', () => {
  const Item = new GraphQLInputObjectType({
    name: 'Item',
    fields: {
      names: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
      text: { type: GraphQLString },
    },
  });
  const type = new GraphQLList(Item);
  it('finds long lists at any depth of the input type', () => {
    expect(inspectInput([{ names: ['a', 'b', 'c'] }], type, 2)).toEqual({ kind: 'listSize', actual: 3 });
    expect(inspectInput([{ names: ['a', 'b'] }, {}], type, 2)).toBeNull();
  });
  it('refuses text PostgreSQL cannot store, inside JSON too, and dates outside 0001–9999', () => {
    expect(inspectInput([{ text: 'a\u0000b' }], type, 10)?.kind).toBe('string');
    expect(inspectInput([{ text: 'a\ud800b' }], type, 10)?.kind).toBe('string');
    expect(inspectInput([{ text: '🧠 ok' }], type, 10)).toBeNull();
    expect(inspectInput({ deep: [{ x: 'ok' }, { y: 'no\u0000' }] }, GraphQLString, 10)?.kind).toBe('string');
    const year0 = new Date(0);
    year0.setUTCFullYear(0, 0, 1);
    expect(inspectInput(year0, GraphQLString, 10)?.kind).toBe('date');
    expect(inspectInput(new Date('2024-01-01T00:00:00Z'), GraphQLString, 10)).toBeNull();
  });
});
