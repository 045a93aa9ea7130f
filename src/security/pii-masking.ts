import {
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
  defaultFieldResolver,
  getNamedType,
  isObjectType,
} from 'graphql';
import type { Principal } from '../auth/principal.js';
import { requestRecord } from '../auth/request-principal.js';
import type { Queryable } from '../db/database.js';
import { detectPii, maskJson, maskPii } from '../domain/pii.js';
import { appendAuditEntries } from '../store/audit-trail-store.js';

/**
 * PII on the way out. Two rules:
 *
 * - a principal without `pii` never receives a detected value: it is replaced by its category
 *   placeholder (`[email]`, `[phone]`…);
 * - a principal with `pii` receives it unmasked, and the request leaves one `pii_access` audit
 *   record per namespace listing what was served.
 *
 * One choke point: every String and JSON output field of the schema is wrapped
 * (`installPiiMasking`), except pure identifiers (UNMASKED_FIELDS). New fields are covered
 * without anyone remembering to. Code that renders text which leaves the gateway by another
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
  const record = requestRecord(principal);
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
  const record = requestRecord(principal);
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
// The GraphQL field layer

const wrapped = new WeakSet<GraphQLField<unknown, unknown>>();

function isTextBearing(type: GraphQLOutputType): 'text' | 'json' | null {
  const named = getNamedType(type).name;
  if (named === 'String') return 'text';
  if (named === 'JSON') return 'json';
  return null;
}

/**
 * Wraps the resolver of every String / JSON output field (except UNMASKED_FIELDS) so that its
 * value passes `maskJsonForPrincipal` with the request's principal. Idempotent: a schema
 * shared by several gateways is wrapped once.
 */
export function installPiiMasking(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      if (wrapped.has(field) || UNMASKED_FIELDS.has(field.name) || !isTextBearing(field.type)) continue;
      field.resolve = maskingResolver(type.name, field.name, field.resolve ?? defaultFieldResolver);
      wrapped.add(field);
    }
  }
  return schema;
}

function maskingResolver(
  typeName: string,
  fieldName: string,
  resolve: GraphQLFieldResolver<unknown, unknown>,
): GraphQLFieldResolver<unknown, unknown> {
  const guard = (value: unknown, source: unknown, context: unknown): unknown => {
    if (value === null || value === undefined) return value;
    const principal = (context as { principal?: Principal } | null)?.principal;
    // No principal means no rights: fail closed.
    const viewer: Principal = principal ?? NOBODY;
    return maskJsonForPrincipal(viewer, value, originOf(typeName, fieldName, source));
  };
  return (source, args, context, info) => {
    const value = resolve(source, args, context, info);
    if (isPromiseLike(value)) return Promise.resolve(value).then((v) => guard(v, source, context));
    return guard(value, source, context);
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
