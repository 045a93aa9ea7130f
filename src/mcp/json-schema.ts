import { z } from 'zod';

/**
 * The JSON Schema of a tool's input, printed from its zod schema as the input side (before
 * transforms). Dates travel as ISO 8601 strings, as they do over GraphQL (DateTime), so a
 * `z.date()` is listed as a `date-time` string.
 */
export function toolInputJsonSchema(schema: z.ZodObject): { type: 'object' } & Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === 'date') {
        ctx.jsonSchema.type = 'string';
        ctx.jsonSchema.format = 'date-time';
      }
    },
  });
  const { $schema: _dialect, ...rest } = json;
  return { ...rest, type: 'object' };
}
