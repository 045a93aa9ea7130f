import type { z } from 'zod';
import { parseDateTime } from '../domain/temporal.js';
import { DATE_MARK, type JsonSchema, toolArgumentSchema } from './json-schema.js';

/**
 * A tool call's arguments, read the way MCP clients send them. Many clients type every
 * argument as text (`--tool-arg k=2` sends "2"), so a string is turned into the number or
 * boolean the tool's schema asks for where the schema allows nothing else at that place: an
 * integer field takes "2" (not "2.5"), a number field "2.5", a boolean field "true" or "false".
 * A field that also accepts a string, or any value, is left as it came.
 *
 * Then the arguments are checked against the tool's zod schema (the one the service validates
 * with) and every problem is worded in the tool's own terms: the argument's path as the client
 * wrote it (`observations[0].occurredAt`), what was expected and what came.
 */

export interface ArgumentIssue {
  path: string;
  message: string;
}

export type CheckedArguments =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; issues: ArgumentIssue[] };

export function checkArguments(input: z.ZodObject, args: Record<string, unknown>): CheckedArguments {
  const root = toolArgumentSchema(input);
  const issues: ArgumentIssue[] = [];
  const coerced = coerce(args, root, root, [], issues) as Record<string, unknown>;
  // zod sees dates as Date objects, as the services do once GraphQL has parsed them.
  const forZod = withDates(coerced, root, root);
  const parsed = input.safeParse(forZod, {
    reportInput: true,
    error: (issue) => wordIssue(issue, schemaAt(root, issue.path ?? []), root),
  });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = pathText(issue.path);
      // One problem per place: an unknown field found by the walk, or zod's first issue there.
      if (issues.some((i) => i.path === path)) continue;
      // A schema's own message ("key must not be empty") is told what came, too.
      const told = /\bgot\b/.test(issue.message);
      const message = told ? issue.message : `${issue.message}, got ${describeValue(issue.input)}`;
      issues.push({ path, message });
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, args: coerced };
}

/** `Invalid arguments for search_memory: k: expected an integer, got "2.5".` */
export function describeArgumentIssues(tool: string, issues: readonly ArgumentIssue[]): string {
  const lines = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  return `Invalid arguments for ${tool}: ${lines.join('; ')}.`;
}

// ---------------------------------------------------------------------------- the schema walk

/** The alternatives a place in the schema allows, `$ref`s resolved, null left out. */
function alternatives(schema: JsonSchema | undefined, root: JsonSchema, depth = 0): JsonSchema[] {
  if (!schema || depth > 20) return [];
  const ref = typeof schema.$ref === 'string' ? resolveRef(schema.$ref, root) : undefined;
  if (ref) return alternatives(ref, root, depth + 1);
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) return union.flatMap((s) => alternatives(s, root, depth + 1));
  if (Array.isArray(schema.type)) {
    return (schema.type as string[]).filter((t) => t !== 'null').map((type) => ({ ...schema, type }));
  }
  if (schema.type === 'null') return [];
  return [schema];
}

function resolveRef(ref: string, root: JsonSchema): JsonSchema | undefined {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!match) return ref === '#' ? root : undefined;
  return (root[match[1]!] as Record<string, JsonSchema> | undefined)?.[match[2]!];
}

/** The one alternative of the given type, when the place allows exactly one of that type. */
function only(schemas: JsonSchema[], type: string): JsonSchema | undefined {
  const matching = schemas.filter((s) => s.type === type);
  return matching.length === 1 ? matching[0] : undefined;
}

function propertySchema(object: JsonSchema, key: string): JsonSchema | undefined {
  const properties = object.properties as Record<string, JsonSchema> | undefined;
  if (properties && Object.hasOwn(properties, key)) return properties[key];
  const extra = object.additionalProperties;
  return extra && typeof extra === 'object' ? (extra as JsonSchema) : undefined;
}

/** The schema at an issue's path, or undefined where the walk cannot follow it. */
export function schemaAt(root: JsonSchema, path: readonly PropertyKey[]): JsonSchema | undefined {
  let here: JsonSchema | undefined = root;
  for (const segment of path) {
    const options = alternatives(here, root);
    if (typeof segment === 'number') {
      here = only(options, 'array')?.items as JsonSchema | undefined;
    } else {
      const object = only(options, 'object');
      here = object ? propertySchema(object, String(segment)) : undefined;
    }
    if (!here) return undefined;
  }
  return here;
}

const INTEGER_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The value with unambiguous number and boolean strings converted; unknown nested fields noted. */
function coerce(
  value: unknown,
  schema: JsonSchema | undefined,
  root: JsonSchema,
  path: PropertyKey[],
  issues: ArgumentIssue[],
): unknown {
  const options = alternatives(schema, root);
  if (options.length === 0) return value;
  if (typeof value === 'string') return coerceText(value, options);
  if (Array.isArray(value)) {
    const items = only(options, 'array')?.items as JsonSchema | undefined;
    return items ? value.map((v, i) => coerce(v, items, root, [...path, i], issues)) : value;
  }
  if (value !== null && typeof value === 'object') {
    const object = only(options, 'object');
    if (!object) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const field = propertySchema(object, key);
      // Top-level names are checked before this walk; nested ones are refused here in tool terms.
      if (!field && path.length > 0 && object.properties && object.additionalProperties === undefined) {
        const known = Object.keys(object.properties as object).join(', ');
        issues.push({ path: pathText([...path, key]), message: `unknown field (the fields here: ${known})` });
      }
      out[key] = field ? coerce(v, field, root, [...path, key], issues) : v;
    }
    return out;
  }
  return value;
}

function coerceText(text: string, options: JsonSchema[]): unknown {
  // Only where the place allows one scalar type and no string: "2" for a string field stays "2".
  const types = new Set(options.map((s) => s.type));
  if (types.size !== 1 || options.some((s) => s.type === undefined)) return text;
  const [type] = types;
  const trimmed = text.trim();
  if (type === 'integer' && INTEGER_TEXT.test(trimmed)) {
    const n = Number(trimmed);
    return Number.isSafeInteger(n) ? n : text;
  }
  if (type === 'number' && NUMBER_TEXT.test(trimmed)) {
    const n = Number(trimmed);
    return Number.isFinite(n) ? n : text;
  }
  if (type === 'boolean' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return text;
}

/** A copy with the ISO date-time strings of date fields as Date objects (what zod checks). */
function withDates(value: unknown, schema: JsonSchema | undefined, root: JsonSchema): unknown {
  const options = alternatives(schema, root);
  if (options.length === 0) return value;
  if (typeof value === 'string') {
    if (!options.some(isDate)) return value;
    const parsed = parseDateTime(value);
    return parsed.ok ? parsed.value : value;
  }
  if (Array.isArray(value)) {
    const items = only(options, 'array')?.items as JsonSchema | undefined;
    return items ? value.map((v) => withDates(v, items, root)) : value;
  }
  const object = only(options, 'object');
  if (value === null || typeof value !== 'object' || !object) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, withDates(v, propertySchema(object, k), root)]),
  );
}

function isDate(schema: JsonSchema): boolean {
  return schema[DATE_MARK] === true;
}

// ---------------------------------------------------------------------------- the wording

/** `observations[0].occurredAt`: the path as a client writes it. */
export function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out;
}

/** What a place in the schema expects, in words: "an integer", "one of HYBRID, EXACT". */
export function describeExpected(schema: JsonSchema | undefined, root: JsonSchema): string | undefined {
  const options = alternatives(schema, root);
  if (options.length === 0) return undefined;
  const words = [...new Set(options.map(describeOne))];
  return words.join(' or ');
}

function describeOne(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${(schema.enum as unknown[]).map(String).join(', ')}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (isDate(schema)) return 'an ISO 8601 date-time with a time zone (e.g. 2024-05-01T10:00:00Z)';
  switch (schema.type) {
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a string';
    case 'array':
      return 'a list';
    case 'object':
      return 'an object';
    default:
      return 'a value';
  }
}

/** What came, briefly: `"2.5"`, `7`, `nothing`, `a list of 3`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value !== null && typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

type RawIssue = z.core.$ZodRawIssue;

/** zod's issue in the tool's terms; undefined keeps zod's own message. */
function wordIssue(issue: RawIssue, schema: JsonSchema | undefined, root: JsonSchema): string | undefined {
  const got = describeValue(issue.input);
  const expected = describeExpected(schema, root);
  switch (issue.code) {
    case 'invalid_type':
    case 'invalid_union':
    case 'invalid_value':
      return `expected ${expected ?? ('expected' in issue ? String(issue.expected) : 'another value')}, got ${got}`;
    case 'too_small':
    case 'too_big':
      return `expected ${bound(issue, expected)}, got ${sizeOf(issue.input, issue.origin)}`;
    case 'invalid_format':
      return issue.format === 'regex' && 'pattern' in issue
        ? `expected a string matching ${String(issue.pattern)}, got ${got}`
        : `expected ${issue.format === 'date-time' ? 'an ISO 8601 date-time' : `a string in the format ${issue.format}`}, got ${got}`;
    default:
      return undefined;
  }
}

function bound(
  issue: { code: 'too_small' | 'too_big'; origin?: string; inclusive?: boolean } & (
    | { minimum: number | bigint }
    | { maximum: number | bigint }
  ),
  expected: string | undefined,
): string {
  const small = issue.code === 'too_small';
  const limit = Number('minimum' in issue ? issue.minimum : issue.maximum);
  const inclusive = issue.inclusive !== false;
  const word = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
  switch (issue.origin) {
    case 'string':
      return `${word} ${limit} character${limit === 1 ? '' : 's'}`;
    case 'array':
    case 'set':
      return `${word} ${limit} item${limit === 1 ? '' : 's'}`;
    case 'date':
      return `a date-time ${small ? 'from' : 'until'} ${new Date(limit).toISOString()}`;
    default:
      return `${expected ?? 'a number'} ${word} ${limit}`;
  }
}

function sizeOf(value: unknown, origin: string | undefined): string {
  if ((origin === 'string' && typeof value === 'string') || Array.isArray(value)) {
    const n = typeof value === 'string' ? Array.from(value).length : value.length;
    return `${n} ${origin === 'string' ? 'character' : 'item'}${n === 1 ? '' : 's'}`;
  }
  return describeValue(value);
}
