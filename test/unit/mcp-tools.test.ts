import {
  type GraphQLInputObjectType,
  type OperationDefinitionNode,
  getNamedType,
  isInputObjectType,
  parse,
  typeFromAST,
  validate,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { schema } from '../../src/schema/index.js';

/**
 * A tool is its GraphQL operation plus a zod input: both must agree with the schema, so a
 * schema change that breaks a tool fails here rather than in an agent's hands.
 */
describe('MCP tools agree with the GraphQL schema', () => {
  for (const tool of MCP_TOOLS) {
    it(`${tool.name}: its operation validates and every input field reaches a variable`, () => {
      const document = parse(tool.document);
      expect(validate(schema, document).map((e) => e.message)).toEqual([]);
      const operation = document.definitions.find(
        (d): d is OperationDefinitionNode => d.kind === 'OperationDefinition',
      )!;
      expect(operation.name?.value).toMatch(/^Mcp[A-Z]/);
      expect(operation.operation).toBe(tool.readOnly ? 'query' : 'mutation');
      const variables = new Map(
        operation.variableDefinitions!.map((v) => [
          v.variable.name.value,
          typeFromAST(schema, v.type as never),
        ]),
      );
      const fields = Object.keys(tool.input.shape);
      const wrapped = variables.size === 1 && variables.has('input') && !fields.includes('input');
      if (wrapped) {
        // The arguments are one input object: every zod field is a field of it.
        const type = getNamedType(variables.get('input')!);
        expect(isInputObjectType(type)).toBe(true);
        const inputFields = Object.keys((type as GraphQLInputObjectType).getFields());
        expect(fields.filter((f) => !inputFields.includes(f))).toEqual([]);
      } else {
        expect(fields.filter((f) => !variables.has(f))).toEqual([]);
      }
    });
  }

  it('names are unique snake_case', () => {
    const names = MCP_TOOLS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z]+(_[a-z]+)+$/);
  });
});
