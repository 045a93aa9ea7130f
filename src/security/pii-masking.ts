import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  defaultFieldResolver,
  getNamedType,
  isLeafType,
  isObjectType,
} from 'graphql';
import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { detectPii, maskJson, maskPii } from '../domain/pii.js';
import { appendAuditEntries } from '../kernel/store/audit-store.js';

/**
 * PII on the way out. Two rules:
 *
 * - a principal without `pii` never receives a detected value: it is replaced by its category
 *   placeholder (`[email]`, `[phone]`…);
 * - a principal with `pii` receives it unmasked, and the request leaves one `pii_access` audit
 *   record per namespace listing what was served.
 *
 * One choke point, where values leave: every String and JSON value of a result is masked
 * (`maskResultData`, walked along the operation), except pure identifiers (UNMASKED_FIELDS).
 * New fields are covered without anyone remembering to. Audited `pii` principals run on a
 * copy of the schema whose text fields note what they serve (`piiAuditSchema`). Code that renders text which leaves the gateway by another
 * road — LLM prompts, synthesized answers before they are returned — calls
 * `maskForPrincipal` / `maskJsonForPrincipal` itself.
 */

/** Where a value came from, for the audit; namespace defaults to the namespaces the request read. */
export interface PiiOrigin {
  namespace?: string | null;
  /** `Entity`, `Observation`, `Chunk`, `search.context`, `llm.prompt`… */
  type: string;
  id?: string | number | null;
  field?: string;
  /** The stored row is marked as personal data (explicit marks such as `fio` cannot be detected). */
  flagged?: boolean;
  categories?: readonly string[];
}

/**
 * Identifiers and labels: never masked, so ids and keys round-trip. Keys are identifiers —
 * personal data belongs in attributes and text, where it is masked (SECURITY.md says so).
 */
export const UNMASKED_FIELDS: ReadonlySet<string> = new Set([
  'namespace',
  'key',
  'kind',
  'predicate',
  'factId',
  'observationId',
  'traceId',
  'cursor',
  'startCursor',
  'endCursor',
  'scopes',
  'channel',
  'code',
  'contentSource',
  'principalId',
  'action',
]);

// Every detector needs a digit or an `@`: strings without either are skipped cheaply.
const MAY_HOLD_PII = /[0-9@]/;

/** The text as this principal may see it; audits unmasked PII served to a `pii` principal. */
export function maskForPrincipal(principal: Principal, text: string, origin?: PiiOrigin): string {
  if (!principal.pii) return MAY_HOLD_PII.test(text) ? maskPii(text) : text;
  const categories = MAY_HOLD_PII.test(text) ? detectPii(text).categories : [];
  if (categories.length > 0 || origin?.flagged) noteServed(principal, origin, categories);
  return text;
}

/** Same for a JSON value: every string leaf, keys and structure kept. */
export function maskJsonForPrincipal<T>(principal: Principal, value: T, origin?: PiiOrigin): T {
  if (value === null || value === undefined) return value;
  if (!principal.pii) return maskJson(value);
  const categories = new Set<string>();
  visitStrings(value, (s) => {
    if (MAY_HOLD_PII.test(s)) for (const c of detectPii(s).categories) categories.add(c);
  });
  if (categories.size > 0 || origin?.flagged) noteServed(principal, origin, [...categories]);
  return value;
}

function noteServed(principal: Principal, origin: PiiOrigin | undefined, detected: readonly string[]): void {
  const record = principal.requestAudit;
  // Not a request principal (CLI, background work), or local mode: nothing to audit.
  if (!record?.auditPii) return;
  const namespaces = origin?.namespace
    ? [origin.namespace]
    : record.namespacesRead.size > 0
      ? [...record.namespacesRead]
      : ['*'];
  const type = origin?.type ?? 'text';
  const id = origin?.id == null ? null : String(origin.id);
  for (const namespace of namespaces) {
    const key = JSON.stringify([namespace, type, id]);
    let item = record.piiServed.get(key);
    if (!item) {
      item = { namespace, type, id, fields: new Set(), categories: new Set() };
      record.piiServed.set(key, item);
    }
    if (origin?.field) item.fields.add(origin.field);
    for (const c of detected) item.categories.add(c);
    for (const c of origin?.categories ?? []) item.categories.add(c);
  }
}

/** Most items a single audit record lists; the count is always exact. */
const MAX_ITEMS_PER_RECORD = 200;

/**
 * Writes the request's `pii_access` records (one per namespace) and clears them. Returns the
 * number of records written. Called once per request, after execution, before the response.
 */
export async function flushPiiAccess(
  principal: Principal,
  db: Queryable,
  operation: string | null,
): Promise<number> {
  const record = principal.requestAudit;
  if (!record || record.piiServed.size === 0) return 0;
  const byNamespace = new Map<string, PiiServedSummary[]>();
  for (const item of record.piiServed.values()) {
    const list = byNamespace.get(item.namespace) ?? [];
    list.push({
      type: item.type,
      id: item.id,
      fields: [...item.fields].sort(),
      categories: [...item.categories].sort(),
    });
    byNamespace.set(item.namespace, list);
  }
  record.piiServed.clear();
  await appendAuditEntries(
    db,
    [...byNamespace].map(([namespace, items]) => ({
      namespace,
      principalId: principal.id,
      action: 'pii_access',
      target: operation,
      summary: {
        operation,
        itemCount: items.length,
        categories: [...new Set(items.flatMap((i) => i.categories))].sort(),
        items: items.slice(0, MAX_ITEMS_PER_RECORD),
        truncated: items.length > MAX_ITEMS_PER_RECORD,
      },
    })),
  );
  return byNamespace.size;
}

interface PiiServedSummary {
  type: string;
  id: string | null;
  fields: string[];
  categories: string[];
}

// -----------------------------------------------------------------------------------------
// The GraphQL layer

function isTextBearing(type: GraphQLOutputType): 'text' | 'json' | null {
  const named = getNamedType(type).name;
  if (named === 'String') return 'text';
  if (named === 'JSON') return 'json';
  return null;
}

/**
 * Masks an execution result in place for a principal without `pii`: every String and JSON
 * value the operation selected (except UNMASKED_FIELDS), walked once along the operation's
 * selection set where the values leave the gateway. Resolvers stay unwrapped, so the
 * principals who see everything pay nothing for the principals who see less.
 */
export function maskResultData(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  data: Record<string, unknown> | null | undefined,
): void {
  if (!data) return;
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode =>
      d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName),
  );
  const root = operation ? schema.getRootType(operation.operation) : undefined;
  if (!operation || !root) return;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  maskObject(schema, fragments, data, [root], [operation.selectionSet]);
}

function maskObject(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  value: unknown,
  types: readonly GraphQLObjectType[],
  sets: readonly SelectionSetNode[],
): void {
  if (Array.isArray(value)) {
    for (const item of value) maskObject(schema, fragments, item, types, sets);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const row = value as Record<string, unknown>;
  for (const [key, nodes] of responseFields(sets, fragments)) {
    const v = row[key];
    if (v === null || v === undefined) continue;
    // A response key of an abstract type may name different fields on different types
    // (aliases): masked if any of them is text-bearing. Fail closed.
    for (const name of new Set(nodes.map((n) => n.name.value))) {
      for (const type of types) {
        const field = type.getFields()[name];
        if (!field) continue;
        const named = getNamedType(field.type);
        if (isLeafType(named)) {
          if (!UNMASKED_FIELDS.has(name) && isTextBearing(field.type)) row[key] = maskLeaf(row[key]);
          continue;
        }
        const subSets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
        const subTypes = isObjectType(named) ? [named] : schema.getPossibleTypes(named);
        maskObject(schema, fragments, v, subTypes, subSets);
      }
    }
  }
}

function maskLeaf(value: unknown): unknown {
  if (typeof value === 'string') return MAY_HOLD_PII.test(value) ? maskPii(value) : value;
  return maskJson(value);
}

/** Field nodes by response key, through fragments and inline fragments (type conditions aside). */
function responseFields(
  sets: readonly SelectionSetNode[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): Map<string, FieldNode[]> {
  const out = new Map<string, FieldNode[]>();
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        out.set(key, [...(out.get(key) ?? []), s]);
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        visit(fragments.get(s.name.value)?.selectionSet);
      }
    }
  };
  for (const set of sets) visit(set);
  return out;
}

/**
 * A copy of the schema whose String / JSON fields (except UNMASKED_FIELDS) note what they
 * serve, for principals with `pii` whose access is audited: the audit names the row (type,
 * id, field) each value came from, which only the resolver knows. Only those requests run on
 * it; everyone else runs on the unwrapped schema.
 */
export function piiAuditSchema(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field, fieldName, typeName) => {
      if (typeName.startsWith('__') || UNMASKED_FIELDS.has(fieldName) || !isTextBearing(field.type))
        return field;
      return {
        ...field,
        resolve: auditingResolver(typeName, fieldName, field.resolve ?? defaultFieldResolver),
      };
    },
  });
}

function auditingResolver(
  typeName: string,
  fieldName: string,
  resolve: GraphQLFieldResolver<unknown, unknown>,
): GraphQLFieldResolver<unknown, unknown> {
  const note = (value: unknown, source: unknown, context: unknown): unknown => {
    if (value === null || value === undefined) return value;
    const principal = (context as { principal?: Principal } | null)?.principal;
    // No principal means no rights: fail closed.
    return maskJsonForPrincipal(principal ?? NOBODY, value, originOf(typeName, fieldName, source));
  };
  return (source, args, context, info) => {
    const value = resolve(source, args, context, info);
    if (isPromiseLike(value)) return Promise.resolve(value).then((v) => note(v, source, context));
    return note(value, source, context);
  };
}

const NOBODY: Principal = Object.freeze({
  id: 'anonymous',
  read: [],
  write: [],
  scopes: [],
  pii: false,
  admin: false,
});

function originOf(typeName: string, field: string, source: unknown): PiiOrigin {
  const row = (source ?? {}) as Record<string, unknown>;
  const namespace = typeof row.namespace === 'string' ? row.namespace : null;
  const id = row.key ?? row.factId ?? row.observationId ?? row.chunkId ?? row.traceId ?? null;
  const categories = Array.isArray(row.piiCategories) ? (row.piiCategories as string[]) : undefined;
  return {
    namespace,
    type: typeName,
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    field,
    flagged: row.pii === true,
    categories,
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function visitStrings(value: unknown, fn: (s: string) => void): void {
  if (typeof value === 'string') fn(value);
  else if (Array.isArray(value)) for (const item of value) visitStrings(item, fn);
  else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const item of Object.values(value)) visitStrings(item, fn);
  }
}
