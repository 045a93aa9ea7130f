import { GraphQLError, Kind } from 'graphql';
import { builder } from './builder.js';
import { parseDateTime } from '../../domain/temporal.js';

builder.scalarType('DateTime', {
  description: 'ISO-8601 with a time zone in, UTC ISO-8601 out.',
  serialize: (value) => {
    const date = value instanceof Date ? value : new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime cannot represent an invalid date');
    return date.toISOString();
  },
  parseValue: (value) => parseDateTimeOrThrow(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw badDate('DateTime must be a string');
    return parseDateTimeOrThrow(ast.value);
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast) => literalToJson(ast),
});

function parseDateTimeOrThrow(value: unknown): Date {
  if (typeof value !== 'string') throw badDate('DateTime must be an ISO-8601 string');
  const parsed = parseDateTime(value.length > 64 ? value.slice(0, 64) : value);
  if (!parsed.ok || value.length > 64)
    throw badDate(`DateTime: ${parsed.ok ? 'too long' : parsed.error.message}`);
  return parsed.value;
}

function badDate(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}

type ValueNode = Parameters<NonNullable<Parameters<typeof builder.scalarType>[1]['parseLiteral']>>[0];

function literalToJson(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literalToJson);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalToJson(f.value)]));
    default:
      throw new GraphQLError('JSON literals cannot contain variables inside objects', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
  }
}
