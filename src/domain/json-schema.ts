/**
 * The JSON Schema subset domain packs use for natural keys and attributes — small enough to
 * validate without a dependency, strict enough that a pack never silently relies on a keyword
 * that is not enforced:
 *
 *   type (string | number | integer | boolean | object | array | null, or a list of them),
 *   properties, required, additionalProperties (boolean or schema), enum, const,
 *   pattern, minLength, maxLength (in code points), minimum, maximum, exclusiveMinimum,
 *   exclusiveMaximum, items, minItems, maxItems,
 *   and the annotations title, description, $schema, $comment, default, examples.
 *
 * `compileJsonSchema` checks a schema (unknown keywords, wrong shapes, unsafe patterns) once;
 * the compiled validator then reports every violation with a JSON Pointer path.
 */
import { canonicalJson } from './ids.js';
import { MAX_MATCH_INPUT, checkRegexSafety, compilePattern } from './regex-safety.js';

type JsonSchema = Record<string, unknown>;

export interface SchemaIssue {
  /** JSON Pointer into the validated value ('' = the value itself). */
  path: string;
  message: string;
}

export type Validator = (value: unknown) => SchemaIssue[];

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;
type TypeName = (typeof TYPES)[number];

const ANNOTATIONS = new Set(['title', 'description', '$schema', '$comment', 'default', 'examples']);
const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'const',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'items',
  'minItems',
  'maxItems',
]);

export class JsonSchemaError extends Error {
  constructor(
    readonly schemaPath: string,
    message: string,
  ) {
    super(`${schemaPath || '(root)'}: ${message}`);
  }
}

const MAX_DEPTH = 16;

/** Checks `schema` against the supported subset and returns its validator; throws JsonSchemaError. */
export function compileJsonSchema(
  schema: unknown,
  schemaPath = '',
  options: { checkPatterns?: boolean } = {},
): Validator {
  return compile(schema, schemaPath, 0, options.checkPatterns ?? true);
}

/** One keyword group's check of a value at `path`; it appends what it finds to `out`. */
type Check = (value: unknown, path: string, out: SchemaIssue[]) => void;

/** Where a schema sits in its pack, for error paths and the nesting bound of its sub-schemas. */
interface Site {
  at: string;
  depth: number;
  checkPatterns: boolean;
}

function compile(schema: unknown, at: string, depth: number, checkPatterns: boolean): Validator {
  if (depth > MAX_DEPTH) throw new JsonSchemaError(at, `schemas nest at most ${MAX_DEPTH} levels`);
  if (schema === true) return () => [];
  if (schema === false) return (_v) => [{ path: '', message: 'no value is allowed here' }];
  if (!isObject(schema)) throw new JsonSchemaError(at, 'a schema is an object (or true/false)');
  assertKnownKeywords(schema, at);
  const site: Site = { at, depth, checkPatterns };
  // In keyword order: a schema with several faults reports the first of them.
  const checks = [
    typeCheck(schema, at),
    enumCheck(schema, at),
    constCheck(schema),
    lengthCheck(schema, at),
    patternCheck(schema, site),
    ...boundChecks(schema, at),
    objectCheck(schema, site),
    arrayCheck(schema, site),
  ].filter((c): c is Check => c !== null);
  return (value) => {
    const out: SchemaIssue[] = [];
    for (const check of checks) check(value, '', out);
    return out;
  };
}

function assertKnownKeywords(schema: JsonSchema, at: string): void {
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) {
      throw new JsonSchemaError(at, `unsupported keyword "${key}" (supported: ${[...KEYWORDS].join(', ')})`);
    }
  }
}

function typeCheck(schema: JsonSchema, at: string): Check | null {
  if (schema.type === undefined) return null;
  const list = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (list.length === 0 || !list.every((t): t is TypeName => TYPES.includes(t as TypeName))) {
    throw new JsonSchemaError(`${at}/type`, `type must be one of ${TYPES.join(', ')} (or a list of them)`);
  }
  return (v, path, out) => {
    if (!list.some((t) => hasType(v, t)))
      out.push({ path, message: `must be ${list.join(' or ')}, got ${typeOf(v)}` });
  };
}

function enumCheck(schema: JsonSchema, at: string): Check | null {
  if (schema.enum === undefined) return null;
  if (!Array.isArray(schema.enum) || schema.enum.length === 0) {
    throw new JsonSchemaError(`${at}/enum`, 'enum must be a non-empty array');
  }
  const allowed = new Set(schema.enum.map((e) => canonicalJson(e)));
  const shown = schema.enum
    .slice(0, 10)
    .map((e) => JSON.stringify(e))
    .join(', ');
  return (v, path, out) => {
    if (!allowed.has(canonicalJson(v))) out.push({ path, message: `must be one of ${shown}` });
  };
}

function constCheck(schema: JsonSchema): Check | null {
  if (schema.const === undefined) return null;
  const expected = canonicalJson(schema.const);
  return (v, path, out) => {
    if (canonicalJson(v) !== expected)
      out.push({ path, message: `must equal ${JSON.stringify(schema.const)}` });
  };
}

/** minLength and maxLength, counted in code points. */
function lengthCheck(schema: JsonSchema, at: string): Check | null {
  const minLength = count(schema, 'minLength', at);
  const maxLength = count(schema, 'maxLength', at);
  if (minLength === null && maxLength === null) return null;
  return (v, path, out) => {
    if (typeof v !== 'string') return;
    const n = [...v].length;
    if (minLength !== null && n < minLength)
      out.push({ path, message: `must be at least ${minLength} characters` });
    if (maxLength !== null && n > maxLength)
      out.push({ path, message: `must be at most ${maxLength} characters` });
  };
}

/**
 * A pattern checked for safety once; values too long to match safely are refused. A stored
 * pattern the engine refuses (registered under older rules) fails closed, saying why.
 */
function patternCheck(schema: JsonSchema, site: Site): Check | null {
  if (schema.pattern === undefined) return null;
  const at = site.at;
  if (typeof schema.pattern !== 'string')
    throw new JsonSchemaError(`${at}/pattern`, 'pattern must be a string');
  const verdict = checkRegexSafety(schema.pattern);
  if (!verdict.ok && site.checkPatterns)
    throw new JsonSchemaError(`${at}/pattern`, `unsafe or invalid pattern: ${verdict.message}`);
  const source = schema.pattern;
  const re = verdict.ok ? compilePattern(source) : null;
  return (v, path, out) => {
    if (typeof v !== 'string') return;
    if (!re) {
      out.push({
        path,
        message: `cannot be checked: the pattern ${JSON.stringify(source)} is refused (${verdict.message})`,
      });
    } else if (v.length > MAX_MATCH_INPUT) {
      out.push({
        path,
        message: `is longer than ${MAX_MATCH_INPUT} characters, too long to match a pattern`,
      });
    } else if (!re.test(v)) {
      out.push({ path, message: `must match the pattern ${JSON.stringify(source)}` });
    }
  };
}

const BOUNDS = [
  ['minimum', (v: number, b: number) => v >= b, '>='],
  ['maximum', (v: number, b: number) => v <= b, '<='],
  ['exclusiveMinimum', (v: number, b: number) => v > b, '>'],
  ['exclusiveMaximum', (v: number, b: number) => v < b, '<'],
] as const;

/** minimum, maximum, exclusiveMinimum, exclusiveMaximum: one check each. */
function boundChecks(schema: JsonSchema, at: string): Check[] {
  const checks: Check[] = [];
  for (const [key, holds, word] of BOUNDS) {
    const bound = schema[key];
    if (bound === undefined) continue;
    if (typeof bound !== 'number' || !Number.isFinite(bound)) {
      throw new JsonSchemaError(`${at}/${key}`, `${key} must be a number`);
    }
    checks.push((v, path, out) => {
      if (typeof v === 'number' && !holds(v, bound)) out.push({ path, message: `must be ${word} ${bound}` });
    });
  }
  return checks;
}

/** properties, required and additionalProperties; properties are visited in key order. */
function objectCheck(schema: JsonSchema, site: Site): Check | null {
  const { at } = site;
  const properties = new Map<string, Validator>();
  if (schema.properties !== undefined) {
    if (!isObject(schema.properties))
      throw new JsonSchemaError(`${at}/properties`, 'properties must be an object');
    for (const [name, sub] of Object.entries(schema.properties)) {
      properties.set(name, compileSub(sub, `${at}/properties/${escapePointer(name)}`, site));
    }
  }
  let required: string[] = [];
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required) || !schema.required.every((r) => typeof r === 'string')) {
      throw new JsonSchemaError(`${at}/required`, 'required must be an array of property names');
    }
    required = [...new Set(schema.required as string[])];
  }
  const noAdditional = schema.additionalProperties === false;
  const additional =
    schema.additionalProperties === undefined || noAdditional
      ? null
      : compileSub(schema.additionalProperties, `${at}/additionalProperties`, site);
  if (properties.size === 0 && required.length === 0 && !additional && !noAdditional) return null;
  return (v, path, out) => {
    if (!isObject(v)) return;
    for (const name of required) {
      if (!(name in v)) out.push({ path: `${path}/${escapePointer(name)}`, message: 'is required' });
    }
    for (const name of Object.keys(v).sort()) {
      const sub = properties.get(name);
      const childPath = `${path}/${escapePointer(name)}`;
      if (sub) out.push(...prefix(sub(v[name]), childPath));
      else if (noAdditional) out.push({ path: childPath, message: 'is not an allowed property' });
      else if (additional) out.push(...prefix(additional(v[name]), childPath));
    }
  };
}

/** items (one schema for every item; tuples are not supported), minItems and maxItems. */
function arrayCheck(schema: JsonSchema, site: Site): Check | null {
  const { at } = site;
  let items: Validator | null = null;
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items))
      throw new JsonSchemaError(`${at}/items`, 'tuple items are not supported');
    items = compileSub(schema.items, `${at}/items`, site);
  }
  const minItems = count(schema, 'minItems', at);
  const maxItems = count(schema, 'maxItems', at);
  if (!items && minItems === null && maxItems === null) return null;
  return (v, path, out) => {
    if (!Array.isArray(v)) return;
    if (minItems !== null && v.length < minItems)
      out.push({ path, message: `must have at least ${minItems} items` });
    if (maxItems !== null && v.length > maxItems)
      out.push({ path, message: `must have at most ${maxItems} items` });
    if (items) for (const [i, item] of v.entries()) out.push(...prefix(items(item), `${path}/${i}`));
  };
}

/** A sub-schema, one level deeper. */
function compileSub(schema: unknown, at: string, site: Site): Validator {
  return compile(schema, at, site.depth + 1, site.checkPatterns);
}

function prefix(issues: SchemaIssue[], path: string): SchemaIssue[] {
  return issues.map((i) => ({ path: `${path}${i.path}`, message: i.message }));
}

function count(schema: Record<string, unknown>, key: string, at: string): number | null {
  const v = schema[key];
  if (v === undefined) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new JsonSchemaError(`${at}/${key}`, `${key} must be a non-negative integer`);
  }
  return v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasType(v: unknown, t: TypeName): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'null':
      return v === null;
  }
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** One line per issue: `/port must be <= 65535; /name is required`. */
export function formatIssues(issues: SchemaIssue[], root = ''): string {
  return issues.map((i) => `${root}${i.path || (root ? '' : '(value)')} ${i.message}`.trim()).join('; ');
}
