import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** Marks a date field in the schema arguments are read with (never in the listed one). */
export const DATE_MARK = 'x-memgate-date';

/**
 * The JSON Schema of a tool's input, printed from its zod schema as the input side (before
 * transforms). Dates travel as ISO 8601 strings, as they do over GraphQL (DateTime), so a
 * `z.date()` is listed as a `date-time` string.
 */
export function toolInputJsonSchema(schema: z.ZodObject): { type: 'object' } & JsonSchema {
  return printed(schema, false);
}

const argumentSchemas = new WeakMap<z.ZodObject, JsonSchema>();

/**
 * The same schema with its date fields marked (DATE_MARK): what a call's arguments are coerced
 * and described with (arguments.ts). Printed once per tool.
 */
export function toolArgumentSchema(schema: z.ZodObject): JsonSchema {
  let json = argumentSchemas.get(schema);
  if (!json) {
    json = printed(schema, true);
    argumentSchemas.set(schema, json);
  }
  return json;
}

function printed(schema: z.ZodObject, markDates: boolean): { type: 'object' } & JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === 'date') {
        ctx.jsonSchema.type = 'string';
        ctx.jsonSchema.format = 'date-time';
        if (markDates) (ctx.jsonSchema as JsonSchema)[DATE_MARK] = true;
      }
    },
  });
  const { $schema: _dialect, ...rest } = json;
  return { ...rest, type: 'object' };
}
