import { readFileSync } from 'node:fs';
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  print,
  astFromValue,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { printSortedSchema, schema } from '../../src/schema/index.js';

const contract = buildSchema(readFileSync('schema/contract.graphql', 'utf8'));

function kindOf(t: GraphQLNamedType): string {
  if (isObjectType(t)) return 'object';
  if (isInterfaceType(t)) return 'interface';
  if (isInputObjectType(t)) return 'input';
  if (isEnumType(t)) return 'enum';
  if (isUnionType(t)) return 'union';
  if (isScalarType(t)) return 'scalar';
  return 'unknown';
}

function defaultOf(arg: GraphQLArgument | GraphQLInputField): string | null {
  if (arg.defaultValue === undefined) return null;
  const ast = astFromValue(arg.defaultValue, arg.type);
  return ast ? print(ast) : null;
}

/** Differences between the contract and the code for what the code already has. */
function shapeProblems(): string[] {
  const problems: string[] = [];
  for (const want of Object.values(contract.getTypeMap())) {
    if (want.name.startsWith('__')) continue;
    const have = schema.getType(want.name);
    if (!have) continue;
    if (kindOf(have) !== kindOf(want)) {
      problems.push(`${want.name}: is ${kindOf(have)}, contract says ${kindOf(want)}`);
      continue;
    }
    if (isEnumType(want) && isEnumType(have)) {
      const values = new Set(have.getValues().map((v) => v.name));
      for (const v of want.getValues())
        if (!values.has(v.name)) problems.push(`${want.name}.${v.name}: enum value missing`);
    }
    if ((isObjectType(want) || isInterfaceType(want)) && (isObjectType(have) || isInterfaceType(have))) {
      const haveFields = have.getFields() as Record<string, GraphQLField<unknown, unknown>>;
      for (const wf of Object.values(want.getFields())) {
        const hf = haveFields[wf.name];
        if (!hf) continue;
        if (String(hf.type) !== String(wf.type))
          problems.push(`${want.name}.${wf.name}: ${hf.type}, contract says ${wf.type}`);
        for (const wa of wf.args) {
          const ha = hf.args.find((a) => a.name === wa.name);
          if (!ha) problems.push(`${want.name}.${wf.name}(${wa.name}): argument missing`);
          else if (String(ha.type) !== String(wa.type))
            problems.push(`${want.name}.${wf.name}(${wa.name}): ${ha.type}, contract says ${wa.type}`);
          else if (defaultOf(ha) !== defaultOf(wa))
            problems.push(
              `${want.name}.${wf.name}(${wa.name}): default ${defaultOf(ha)}, contract says ${defaultOf(wa)}`,
            );
        }
        for (const ha of hf.args) {
          if (
            !wf.args.some((a) => a.name === ha.name) &&
            isNonNullType(ha.type) &&
            ha.defaultValue === undefined
          ) {
            problems.push(
              `${want.name}.${wf.name}(${ha.name}): extra required argument makes the contract stricter`,
            );
          }
        }
      }
      if (isObjectType(want) && isObjectType(have)) {
        const ifaces = new Set(have.getInterfaces().map((i) => i.name));
        for (const i of want.getInterfaces())
          if (!ifaces.has(i.name)) problems.push(`${want.name}: does not implement ${i.name}`);
      }
    }
    if (isInputObjectType(want) && isInputObjectType(have)) {
      const haveFields = have.getFields();
      for (const wf of Object.values(want.getFields())) {
        const hf = haveFields[wf.name];
        if (!hf) {
          problems.push(`${want.name}.${wf.name}: input field missing`);
          continue;
        }
        if (String(hf.type) !== String(wf.type))
          problems.push(`${want.name}.${wf.name}: ${hf.type}, contract says ${wf.type}`);
        else if (defaultOf(hf) !== defaultOf(wf))
          problems.push(`${want.name}.${wf.name}: default ${defaultOf(hf)}, contract says ${defaultOf(wf)}`);
      }
      for (const hf of Object.values(haveFields)) {
        if (!want.getFields()[hf.name] && isNonNullType(hf.type) && hf.defaultValue === undefined) {
          problems.push(`${want.name}.${hf.name}: extra required input field makes the contract stricter`);
        }
      }
    }
  }
  return problems;
}

describe('the public contract', () => {
  it('every contract type and field the code has keeps the contract shape', () => {
    expect(shapeProblems()).toEqual([]);
  });

  it('the code has every type, field and enum value of schema/contract.graphql', () => {
    const missing: string[] = [];
    for (const want of Object.values(contract.getTypeMap())) {
      if (want.name.startsWith('__')) continue;
      const have = schema.getType(want.name);
      if (!have) {
        missing.push(want.name);
        continue;
      }
      if (isEnumType(want) && isEnumType(have)) {
        for (const v of want.getValues()) if (!have.getValue(v.name)) missing.push(`${want.name}.${v.name}`);
      }
      const fieldsOf = (t: GraphQLNamedType) =>
        isObjectType(t) || isInterfaceType(t) || isInputObjectType(t) ? t.getFields() : null;
      const wantFields = fieldsOf(want);
      const haveFields = fieldsOf(have);
      if (wantFields && haveFields) {
        for (const name of Object.keys(wantFields))
          if (!haveFields[name]) missing.push(`${want.name}.${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The contract is a real document, not an empty file that would pass every check.
    expect(Object.keys(contract.getQueryType()?.getFields() ?? {}).length).toBeGreaterThan(10);
  });

  it('schema/schema.graphql is printed from the code', () => {
    expect(readFileSync('schema/schema.graphql', 'utf8')).toBe(printSortedSchema());
  });
});
