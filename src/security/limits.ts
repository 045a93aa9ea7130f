import {
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type NonNullTypeNode,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  getArgumentValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { unstorableText } from '../domain/storable-text.js';
import type { Plugin } from 'graphql-yoga';

/**
 * Limits that keep one hostile or careless request from monopolising the gateway or the
 * database. Each refusal is a GraphQL error with `extensions.code = LIMIT_EXCEEDED` and
 * `extensions.limit` naming the limit, plus `max` and (where measured) `actual`.
 *
 * Every one of them refuses the request before execution and answers like a GraphQL
 * validation error (see `requestErrorHttp`); the body size is HTTP's own (413).
 *
 * Where each is enforced:
 * - body size: src/http.ts (before anything is parsed);
 * - document nesting and variable nesting: before parsing (a parser's recursion is itself an
 *   attack surface); token count: by the parser;
 * - depth and aliases: validation rules (cached with the document);
 * - cost, list-argument sizes and storable input (no NUL, no lone surrogates, DateTime years
 *   1–9999): before execution, on the coerced arguments, because all depend on variables;
 * - page size: the services (`pageWindow`, PAGE_SIZE_EXCEEDED); batch items: the services.
 */
export interface QueryLimits {
  /** Deepest field nesting of an operation (introspection fields not counted). */
  maxDepth: number;
  /** Aliased fields per operation, fragments expanded. */
  maxAliases: number;
  /** Estimated objects an operation may materialise (lists × their page sizes). */
  maxCost: number;
  /** Longest list in any argument, at any nesting (JSON scalars excluded). */
  maxListSize: number;
  /**
   * Parser tokens per document. Also bounds graphql-js's pairwise field-merging check, which
   * is quadratic in repeated fields (`{ a a a … }`).
   */
  maxTokens: number;
  /** Bracket nesting of the document text, checked before parsing. */
  maxDocumentNesting: number;
  /** Nesting of the variables' JSON value. */
  maxInputDepth: number;
}

export const DEFAULT_LIMITS: QueryLimits = {
  maxDepth: 12,
  maxAliases: 30,
  maxCost: 50_000,
  maxListSize: 1000,
  maxTokens: 5000,
  maxDocumentNesting: 64,
  maxInputDepth: 64,
};

/** A list field with no size argument is assumed to return this many items. */
const DEFAULT_LIST_SIZE = 20;

/**
 * The HTTP status of a request refused before execution, by the rule yoga applies to its own
 * parse and validation errors (GraphQL over HTTP): 400 when the client accepts
 * `application/graphql-response+json`, 200 when it accepts only `application/json` (the legacy
 * media type, where the body alone tells a request error). `spec: true` is how yoga marks an
 * error whose 400 gives way to 200 under `application/json`. A fresh object each time: yoga
 * completes these in place.
 */
export function requestErrorHttp(): { status: number; spec: boolean } {
  return { status: 400, spec: true };
}

export function limitExceeded(limit: string, message: string, max: number, actual?: number): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code: 'LIMIT_EXCEEDED',
      limit,
      max,
      ...(actual === undefined ? {} : { actual }),
      http: requestErrorHttp(),
    },
  });
}

export function useQueryLimits(limits: QueryLimits = DEFAULT_LIMITS): Plugin {
  const checkOnce = checkedPerDocument(limits);
  return {
    // Thrown, not set as a result: that stops the remaining onParams hooks; yoga answers it like a validation error.
    onParams({ params }) {
      const query = typeof params.query === 'string' ? params.query : '';
      if (documentNesting(query, limits.maxDocumentNesting) > limits.maxDocumentNesting) {
        throw limitExceeded(
          'documentNesting',
          `The document nests brackets deeper than ${limits.maxDocumentNesting} levels.`,
          limits.maxDocumentNesting,
        );
      }
      if (params.variables != null && jsonDepthExceeds(params.variables, limits.maxInputDepth)) {
        throw limitExceeded(
          'inputDepth',
          `Variables nest deeper than ${limits.maxInputDepth} levels.`,
          limits.maxInputDepth,
        );
      }
    },
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => parseFn(source, { ...options, maxTokens: limits.maxTokens }));
    },
    onValidate({ addValidationRule }) {
      addValidationRule(depthRule(limits.maxDepth));
      addValidationRule(aliasRule(limits.maxAliases));
    },
    onExecute({ args, setResultAndStopExecution }) {
      const operation = selectedOperation(args.document, args.operationName ?? undefined);
      if (!operation) return;
      const error = checkOnce(
        args.schema,
        args.document,
        operation,
        (args.variableValues ?? {}) as Record<string, unknown>,
      );
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

// -----------------------------------------------------------------------------------------
// Before parsing

/**
 * Deepest nesting of `{ ( [` outside strings and comments; stops counting past `limit` so a
 * hostile document costs one linear scan.
 */
export function documentNesting(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 35 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 13) i++;
    } else if (c === 34 /* " */) {
      if (text.startsWith('"""', i)) {
        const end = text.indexOf('"""', i + 3);
        i = end < 0 ? text.length : end + 2;
      } else {
        i++;
        while (i < text.length && text.charCodeAt(i) !== 34 && text.charCodeAt(i) !== 10) {
          if (text.charCodeAt(i) === 92 /* \ */) i++;
          i++;
        }
      }
    } else if (c === 123 || c === 40 || c === 91) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 125 || c === 41 || c === 93) {
      depth = Math.max(0, depth - 1);
    }
  }
  return deepest;
}

/** True when the JSON value nests deeper than `max` (iterative: deep input cannot overflow). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

// -----------------------------------------------------------------------------------------
// Validation rules: depth and aliases (independent of variables)

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const map = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === 'FragmentDefinition') map.set(def.name.value, def);
  return map;
}

const INTROSPECTION_ROOTS = new Set(['__schema', '__type']);

/**
 * Measures something over a selection set with fragments expanded, memoised per fragment so
 * that fragments spread many times cost one visit. Cycles (reported by graphql's own rule)
 * count as 0.
 */
function measure(
  document: DocumentNode,
  combine: (field: FieldNode, child: number) => number,
  merge: (a: number, b: number) => number,
): (set: SelectionSetNode) => number {
  const fragments = fragmentsOf(document);
  const memo = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (set: SelectionSetNode): number => {
    let total = 0;
    for (const selection of set.selections) {
      let value = 0;
      if (selection.kind === 'Field') {
        if (INTROSPECTION_ROOTS.has(selection.name.value)) continue;
        value = combine(selection, selection.selectionSet ? visit(selection.selectionSet) : 0);
      } else if (selection.kind === 'InlineFragment') {
        value = visit(selection.selectionSet);
      } else {
        const name = selection.name.value;
        const cached = memo.get(name);
        if (cached !== undefined) value = cached;
        else {
          const fragment = fragments.get(name);
          if (!fragment || visiting.has(name)) continue;
          visiting.add(name);
          value = visit(fragment.selectionSet);
          visiting.delete(name);
          memo.set(name, value);
        }
      }
      total = merge(total, value);
    }
    return total;
  };
  return visit;
}

export function operationDepth(document: DocumentNode, operation: OperationDefinitionNode): number {
  return measure(document, (_field, child) => 1 + child, Math.max)(operation.selectionSet);
}

export function operationAliases(document: DocumentNode, operation: OperationDefinitionNode): number {
  return measure(
    document,
    (field, child) => (field.alias ? 1 : 0) + child,
    (a, b) => a + b,
  )(operation.selectionSet);
}

function depthRule(max: number) {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node) {
      const depth = operationDepth(context.getDocument(), node);
      if (depth > max) {
        context.reportError(
          withNodes(
            limitExceeded('depth', `Query depth ${depth} exceeds the maximum of ${max}.`, max, depth),
            node,
          ),
        );
      }
    },
  });
}

function aliasRule(max: number) {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node) {
      const aliases = operationAliases(context.getDocument(), node);
      if (aliases > max) {
        context.reportError(
          withNodes(
            limitExceeded(
              'aliases',
              `The operation uses ${aliases} aliases; the maximum is ${max}.`,
              max,
              aliases,
            ),
            node,
          ),
        );
      }
    },
  });
}

function withNodes(error: GraphQLError, node: OperationDefinitionNode): GraphQLError {
  return new GraphQLError(error.message, { nodes: [node], extensions: error.extensions });
}

// -----------------------------------------------------------------------------------------
// Before execution: cost and list sizes (they depend on variables)

function selectedOperation(document: DocumentNode, name: string | undefined): OperationDefinitionNode | null {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === 'OperationDefinition',
  );
  if (name) return operations.find((o) => o.name?.value === name) ?? null;
  return operations.length === 1 ? operations[0]! : null;
}

const SIZE_ARGS = ['first', 'last', 'limit', 'k'] as const;

/**
 * Estimated cost: every object a field can produce counts 1, and a list multiplies what is
 * below it by its size — the field's own size argument (`first`, `last`, `limit`, `k`, the
 * length of `ids`, or the same inside an `input` object), else the size argument of the
 * connection above it (for `edges`/`nodes`), else DEFAULT_LIST_SIZE. Scalars are free: they
 * cost no query.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  onArguments?: (field: FieldNode, values: Record<string, unknown>, fieldDef: FieldDefLike) => void,
): number {
  const fragments = fragmentsOf(document);
  const root =
    operation.operation === 'mutation'
      ? schema.getMutationType()
      : operation.operation === 'subscription'
        ? schema.getSubscriptionType()
        : schema.getQueryType();
  if (!root) return 0;
  const memo = new Map<string, number>();
  const seen = new WeakSet<FieldNode>();

  const visit = (
    set: SelectionSetNode,
    parent: GraphQLNamedType,
    pending: number | undefined,
    trail: Set<string>,
  ) => {
    let total = 0;
    for (const selection of set.selections) {
      if (selection.kind === 'InlineFragment') {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) total += visit(selection.selectionSet, type, pending, trail);
        continue;
      }
      if (selection.kind === 'FragmentSpread') {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || trail.has(name)) continue;
        const key = `${name}|${pending ?? ''}`;
        let cost = memo.get(key);
        if (cost === undefined) {
          const type = schema.getType(fragment.typeCondition.name.value);
          trail.add(name);
          cost = type ? visit(fragment.selectionSet, type, pending, trail) : 0;
          trail.delete(name);
          memo.set(key, cost);
        }
        total += cost;
        continue;
      }
      if (selection.name.value.startsWith('__')) continue;
      if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
      const fieldDef = parent.getFields()[selection.name.value];
      if (!fieldDef) continue;
      let values: Record<string, unknown> = {};
      try {
        values = getArgumentValues(fieldDef, selection, variables);
      } catch {
        // invalid arguments are execution's to report with its own message
      }
      if (onArguments && !seen.has(selection)) {
        seen.add(selection);
        onArguments(selection, values, fieldDef);
      }
      const named = getNamedType(fieldDef.type);
      if (isLeafType(named)) continue;
      const size = sizeOf(values);
      const list = isListType(getNullableType(fieldDef.type));
      // A parent's size argument sizes only its connection lists, not every list below it.
      const inherited =
        selection.name.value === 'edges' || selection.name.value === 'nodes' ? pending : undefined;
      const multiplier = list ? (size ?? inherited ?? DEFAULT_LIST_SIZE) : 1;
      const childPending = list ? undefined : size;
      const below =
        selection.selectionSet && isCompositeType(named)
          ? visit(selection.selectionSet, named, childPending, trail)
          : 0;
      total += multiplier * (1 + below);
      if (!Number.isFinite(total)) return Number.POSITIVE_INFINITY;
    }
    return total;
  };
  return visit(operation.selectionSet, root, undefined, new Set());
}

function sizeOf(values: Record<string, unknown>): number | undefined {
  const direct = pickSize(values);
  if (direct !== undefined) return direct;
  if (Array.isArray(values.ids)) return values.ids.length;
  const input = values.input;
  if (input && typeof input === 'object' && !Array.isArray(input))
    return pickSize(input as Record<string, unknown>);
  return undefined;
}

function pickSize(values: Record<string, unknown>): number | undefined {
  for (const name of SIZE_ARGS) {
    const v = values[name];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
  }
  return undefined;
}

type FieldDefLike = { args: readonly { name: string; type: GraphQLInputType }[] };

/** What is wrong with one argument value, if anything. */
export type InputProblem =
  | { kind: 'listSize'; actual: number }
  | { kind: 'string'; message: string }
  | { kind: 'date'; message: string };

function stringProblem(value: string): InputProblem | null {
  const message = unstorableText(value);
  return message ? { kind: 'string', message } : null;
}

/**
 * Walks a coerced argument value along its input type and reports the first problem: a list
 * longer than `maxList`, text PostgreSQL cannot store (NUL, lone surrogates — also inside
 * JSON values), or a DateTime outside years 1–9999 (what PostgreSQL and ISO-8601 share).
 * Iterative, so a deep value cannot overflow the stack (its depth is bounded earlier anyway).
 */
export function inspectInput(value: unknown, type: GraphQLInputType, maxList: number): InputProblem | null {
  const stack: [unknown, GraphQLInputType | null][] = [[value, type]];
  while (stack.length > 0) {
    const [item, itemType] = stack.pop()!;
    if (item === null || item === undefined) continue;
    if (typeof item === 'string') {
      const problem = stringProblem(item);
      if (problem) return problem;
      continue;
    }
    if (item instanceof Date) {
      const year = item.getUTCFullYear();
      if (Number.isNaN(year) || year < 1 || year > 9999) {
        return { kind: 'date', message: 'DateTime must lie between years 0001 and 9999.' };
      }
      continue;
    }
    if (typeof item !== 'object') continue;
    // null type: inside a JSON scalar — every string leaf is still text for the database.
    const nullable = itemType && isNonNullType(itemType) ? itemType.ofType : itemType;
    if (nullable && isListType(nullable)) {
      if (!Array.isArray(item)) {
        stack.push([item, nullable.ofType]);
        continue;
      }
      if (item.length > maxList) return { kind: 'listSize', actual: item.length };
      for (const element of item) stack.push([element, nullable.ofType]);
      continue;
    }
    if (nullable && isInputObjectType(nullable)) {
      const fields = nullable.getFields();
      for (const [name, child] of Object.entries(item as Record<string, unknown>)) {
        const field = fields[name];
        if (field) stack.push([child, field.type]);
      }
      continue;
    }
    // JSON (or another object-valued scalar): strings anywhere inside, lists not limited.
    for (const [key, child] of Object.entries(item as Record<string, unknown>)) {
      const problem = stringProblem(key);
      if (problem) return problem;
      stack.push([child, null]);
    }
  }
  return null;
}

function checkCostAndLists(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  limits: QueryLimits,
): GraphQLError | null {
  // Arguments are read with the variables coerced as execution will (DateTime → Date…);
  // variables that do not coerce are execution's to report, with its own message.
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  if (coerced.errors) return null;
  let inputError: GraphQLError | null = null;
  const cost = operationCost(schema, document, operation, coerced.coerced, (field, values, fieldDef) => {
    if (inputError) return;
    for (const arg of fieldDef.args) {
      const problem = inspectInput(values[arg.name], arg.type, limits.maxListSize);
      if (!problem) continue;
      inputError =
        problem.kind === 'listSize'
          ? limitExceeded(
              'listSize',
              `Argument "${arg.name}" of "${field.name.value}" holds a list of ${problem.actual} items; the maximum is ${limits.maxListSize}.`,
              limits.maxListSize,
              problem.actual,
            )
          : new GraphQLError(`Argument "${arg.name}" of "${field.name.value}": ${problem.message}`, {
              extensions: { code: 'BAD_USER_INPUT', http: requestErrorHttp() },
            });
      return;
    }
  });
  if (inputError) return inputError;
  if (cost > limits.maxCost) {
    return limitExceeded(
      'cost',
      `The operation's estimated cost ${Number.isFinite(cost) ? cost : 'Infinity'} exceeds the maximum of ${limits.maxCost}; ask for smaller pages or fewer nested lists.`,
      limits.maxCost,
      Number.isFinite(cost) ? cost : undefined,
    );
  }
  return null;
}

// -----------------------------------------------------------------------------------------
// The same check, once per document where variables cannot change its outcome

/**
 * Cost and argument checks of an operation whose variables are all String, ID, Boolean or
 * enum values (no lists, no input objects, no Int, no DateTime, no JSON) do not depend on
 * the values: no variable can be a size, a list or a date. Such an operation is checked once
 * (yoga caches the parsed document, so the same operation node comes back) with stand-in
 * values; each request then only checks that its values are plain and storable, and anything
 * else takes the full check, which words the errors.
 */
function checkedPerDocument(limits: QueryLimits) {
  const bySchema = new WeakMap<GraphQLSchema, WeakMap<OperationDefinitionNode, PlainCheck | null>>();
  return (
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Record<string, unknown>,
  ): GraphQLError | null => {
    let byOperation = bySchema.get(schema);
    if (!byOperation) {
      byOperation = new WeakMap();
      bySchema.set(schema, byOperation);
    }
    let plain = byOperation.get(operation);
    if (plain === undefined) {
      const kinds = plainVariables(schema, operation);
      plain = kinds && {
        kinds,
        error: checkCostAndLists(schema, document, operation, standIns(kinds), limits),
      };
      byOperation.set(operation, plain);
    }
    if (plain && valuesArePlain(plain.kinds, variables)) return plain.error;
    return checkCostAndLists(schema, document, operation, variables, limits);
  };
}

type PlainKind =
  | { name: string; kind: 'string' | 'boolean'; required: boolean }
  | { name: string; kind: 'enum'; required: boolean; values: ReadonlySet<string> };

interface PlainCheck {
  kinds: PlainKind[];
  error: GraphQLError | null;
}

/** The operation's variables as plain kinds, or null when any may change the check. */
function plainVariables(schema: GraphQLSchema, operation: OperationDefinitionNode): PlainKind[] | null {
  const kinds: PlainKind[] = [];
  for (const def of operation.variableDefinitions ?? []) {
    const nonNull = def.type.kind === Kind.NON_NULL_TYPE;
    const named = nonNull ? (def.type as NonNullTypeNode).type : def.type;
    if (named.kind !== Kind.NAMED_TYPE) return null;
    const type = schema.getType(named.name.value);
    const name = def.variable.name.value;
    // A default value applies when the variable is absent: the full check reads it.
    if (def.defaultValue) return null;
    const required = nonNull;
    if (type === schema.getType('String') || type === schema.getType('ID'))
      kinds.push({ name, kind: 'string', required });
    else if (type === schema.getType('Boolean')) kinds.push({ name, kind: 'boolean', required });
    else if (isEnumType(type))
      kinds.push({ name, kind: 'enum', required, values: new Set(type.getValues().map((v) => v.name)) });
    else return null;
  }
  return kinds;
}

function standIns(kinds: readonly PlainKind[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const k of kinds) {
    if (k.kind === 'enum') values[k.name] = [...k.values][0];
    else values[k.name] = k.kind === 'string' ? 'x' : false;
  }
  return values;
}

/** Values that coerce as they are and hold storable text; anything else gets the full check. */
function valuesArePlain(kinds: readonly PlainKind[], variables: Record<string, unknown>): boolean {
  for (const k of kinds) {
    const v = variables[k.name];
    if (v === undefined || v === null) {
      if (k.required) return false;
      continue;
    }
    if (k.kind === 'boolean') {
      if (typeof v !== 'boolean') return false;
    } else if (typeof v !== 'string') return false;
    else if (k.kind === 'enum' ? !k.values.has(v) : unstorableText(v) !== null) return false;
  }
  return true;
}
