/**
 * Strict-mode schema checks: one call per write kind, made by every write path (entity upserts,
 * observation projection, fact assertions, snapshot reconciliation).
 *
 *   const policy = schemaPolicyFor(scope);                 // one per request (cached)
 *   await policy.assertEntity(tx, ns, { kind, key, attributes });   // throws SCHEMA_VIOLATION
 *   await policy.assertFact(tx, ns, { subject, predicate, object }); // looks endpoint kinds up
 *
 * Without strict mode every check passes (unknown kinds are stored as free entities). In strict
 * mode a namespace accepts the built-in kinds and relations plus what its enabled packs declare;
 * a violation names its rule:
 *   kind-declared, natural-key, attributes-schema, relation-declared, relation-from-kinds,
 *   relation-to-kinds.
 * Checks take the transaction they run in (`q`): PGlite has one connection, and a check must see
 * what the same transaction wrote before it (an entity asserted earlier in an observation).
 */
import type { Queryable } from '../../db/database.js';
import {
  BUILTIN_KINDS,
  type CompiledKind,
  type CompiledPack,
  type DomainPack,
  type NamespaceSchema,
  canonicalKind,
  compilePack,
  isBuiltinKind,
  isBuiltinRelation,
  mergePacks,
} from '../../domain/domain-pack.js';
import { formatIssues } from '../../domain/json-schema.js';
import { matchTemplate } from '../../domain/key-template.js';
import { MemgateError } from '../../errors.js';
import { mergeAttributes } from '../../kernel/store/entity-store.js';
import { findEntityShapes } from './store/entity-shape-store.js';
import { loadNamespacePacks } from './store/namespace-settings-store.js';
import type { RequestScope } from '../../kernel/request-scope.js';

export type SchemaRule =
  | 'kind-declared'
  | 'natural-key'
  | 'attributes-schema'
  | 'relation-declared'
  | 'relation-from-kinds'
  | 'relation-to-kinds';

export interface SchemaViolation {
  code: 'SCHEMA_VIOLATION';
  rule: SchemaRule;
  message: string;
}

export interface EntityCheck {
  kind: string;
  key: string;
  /** The attributes written: a patch merged over the stored ones unless `complete`. */
  attributes?: Record<string, unknown> | null;
  /** The attributes are the entity's whole attribute set (snapshots), not a patch. */
  complete?: boolean;
}

export interface FactKindsCheck {
  subjectKind: string | null;
  predicate: string;
  objectKind: string | null;
  /** Keys, only for messages. */
  subject?: string;
  object?: string;
}

export type Cardinality = 'one' | 'many';

// Versions are immutable, so a compiled pack is valid for the life of the process.
const compiled = new Map<string, CompiledPack>();

function compileCached(ref: string, hash: string, body: Record<string, unknown>): CompiledPack {
  const key = `${ref}#${hash}`;
  let pack = compiled.get(key);
  if (!pack) {
    pack = compilePack(body as DomainPack);
    compiled.set(key, pack);
  }
  return pack;
}

const EMPTY = (namespace: string): NamespaceSchema => ({
  namespace,
  strict: false,
  packs: [],
  kinds: new Map(),
  relations: new Map(),
});

export class SchemaPolicy {
  private readonly schemas = new Map<string, Promise<NamespaceSchema>>();

  /** `visibleScopes`: the writer's (null: all); entities it cannot see read as absent. */
  constructor(private readonly visibleScopes: string[] | null) {}

  /** The namespace's merged schema, loaded once per policy (one statement). */
  schemaFor(q: Queryable, namespace: string): Promise<NamespaceSchema> {
    let schema = this.schemas.get(namespace);
    if (!schema) {
      schema = load(q, namespace);
      this.schemas.set(namespace, schema);
      schema.catch(() => this.schemas.delete(namespace));
    }
    return schema;
  }

  /** Drops the cached schema (after configureNamespace in the same request). */
  forget(namespace: string): void {
    this.schemas.delete(namespace);
  }

  async checkEntity(q: Queryable, namespace: string, e: EntityCheck): Promise<SchemaViolation | null> {
    const schema = await this.schemaFor(q, namespace);
    if (!schema.strict || isBuiltinKind(e.kind)) return null;
    const def = schema.kinds.get(e.kind);
    if (!def) return kindViolation(schema, e.kind);
    const keyProblem = naturalKeyProblem(def, e.key);
    if (keyProblem) {
      return violation('natural-key', `key ${quote(e.key)} of kind "${def.kind}" ${keyProblem}`);
    }
    if (def.attributes) {
      let attributes = e.attributes ?? {};
      if (!e.complete) {
        const existing = (await findEntityShapes(q, namespace, [e.key], this.visibleScopes)).get(e.key);
        attributes = mergeAttributes(
          existing && !existing.placeholder ? existing.attributes : {},
          e.attributes ?? null,
        );
      }
      const issues = def.attributes(attributes);
      if (issues.length > 0) {
        return violation(
          'attributes-schema',
          `attributes of kind "${def.kind}" violate its schema (pack ${def.pack}): ${formatIssues(issues.slice(0, 5), 'attributes')}`,
        );
      }
    }
    return null;
  }

  /** Kinds given (null = unknown yet, e.g. a placeholder endpoint: not checked). */
  async checkFact(q: Queryable, namespace: string, f: FactKindsCheck): Promise<SchemaViolation | null> {
    const schema = await this.schemaFor(q, namespace);
    return checkFactKinds(schema, f);
  }

  /** Looks the endpoints' kinds up (only in strict mode) and checks the relation. */
  async checkFactWrite(
    q: Queryable,
    namespace: string,
    f: { subject: string; predicate: string; object: string },
  ): Promise<SchemaViolation | null> {
    const schema = await this.schemaFor(q, namespace);
    if (!schema.strict || isBuiltinRelation(f.predicate)) return null;
    if (!schema.relations.has(f.predicate))
      return checkFactKinds(schema, { ...f, subjectKind: null, objectKind: null });
    const shapes = await findEntityShapes(q, namespace, [f.subject, f.object], this.visibleScopes);
    const kindOf = (key: string) => {
      const s = shapes.get(key);
      return s && !s.placeholder ? s.kind : null;
    };
    return checkFactKinds(schema, { ...f, subjectKind: kindOf(f.subject), objectKind: kindOf(f.object) });
  }

  async assertEntity(q: Queryable, namespace: string, e: EntityCheck): Promise<void> {
    throwIf(await this.checkEntity(q, namespace, e));
  }

  async assertFact(
    q: Queryable,
    namespace: string,
    f: { subject: string; predicate: string; object: string },
  ) {
    throwIf(await this.checkFactWrite(q, namespace, f));
  }

  /** The declared cardinality of a relation in this namespace; null when no enabled pack declares it. */
  async cardinalityOf(q: Queryable, namespace: string, predicate: string): Promise<Cardinality | null> {
    const schema = await this.schemaFor(q, namespace);
    return schema.relations.get(predicate)?.cardinality ?? null;
  }
}

/** The relation rule on known kinds; pure once the schema is loaded. */
export function checkFactKinds(schema: NamespaceSchema, f: FactKindsCheck): SchemaViolation | null {
  if (!schema.strict || isBuiltinRelation(f.predicate)) return null;
  const rel = schema.relations.get(f.predicate);
  if (!rel) {
    return violation(
      'relation-declared',
      `relation ${quote(f.predicate)} is not declared by the packs enabled in namespace "${schema.namespace}" ${enabled(schema)}`,
    );
  }
  const sides = [
    ['relation-from-kinds', 'subject', f.subject, f.subjectKind, rel.fromKinds, 'fromKinds'],
    ['relation-to-kinds', 'object', f.object, f.objectKind, rel.toKinds, 'toKinds'],
  ] as const;
  for (const [rule, side, key, kind, allowed, field] of sides) {
    if (kind === null) continue;
    const canonical = canonicalKind(schema, kind) ?? kind;
    const allowedCanonical = allowed.map((k) => canonicalKind(schema, k) ?? k);
    if (!allowedCanonical.includes(canonical)) {
      const who = key !== undefined ? `${side} ${quote(key)}` : side;
      return violation(
        rule,
        `relation "${rel.relation}" (pack ${rel.pack}) allows ${field} [${allowed.join(', ')}], but the ${who} is of kind "${kind}"`,
      );
    }
  }
  return null;
}

/** Per-request policy, shared by every service of the request. */
const perRequest = new WeakMap<RequestScope, SchemaPolicy>();

export function schemaPolicyFor(scope: RequestScope): SchemaPolicy {
  let policy = perRequest.get(scope);
  if (!policy) {
    policy = new SchemaPolicy(scope.principal.scopes);
    perRequest.set(scope, policy);
  }
  return policy;
}

export function schemaViolationError(v: SchemaViolation): MemgateError {
  return new MemgateError('SCHEMA_VIOLATION', v.message, { rule: v.rule });
}

function throwIf(v: SchemaViolation | null): void {
  if (v) throw schemaViolationError(v);
}

async function load(q: Queryable, namespace: string): Promise<NamespaceSchema> {
  const row = await loadNamespacePacks(q, namespace);
  if (!row) return EMPTY(namespace);
  const packs = row.packs
    .filter((p) => p.body !== null && p.bodyHash !== null)
    .map((p) => compileCached(p.ref, p.bodyHash!, p.body!));
  return mergePacks(namespace, row.strict, packs).schema;
}

function naturalKeyProblem(def: CompiledKind, key: string): string | null {
  if (!def.naturalKey) return null;
  if ('template' in def.naturalKey) {
    return matchTemplate(def.naturalKey.template, key)
      ? null
      : `does not match its natural key template ${quote(def.naturalKey.template.source)}`;
  }
  const issues = def.naturalKey.schema(key);
  return issues.length === 0 ? null : `violates its natural key schema: ${formatIssues(issues.slice(0, 3))}`;
}

function kindViolation(schema: NamespaceSchema, kind: string): SchemaViolation {
  return violation(
    'kind-declared',
    `kind ${quote(kind)} is not declared by the packs enabled in namespace "${schema.namespace}" ${enabled(schema)}`,
  );
}

function enabled(schema: NamespaceSchema): string {
  const packs = schema.packs.length > 0 ? schema.packs.join(', ') : 'none';
  return `(strict mode; packs: ${packs}; built-in kinds: ${BUILTIN_KINDS.join(', ')})`;
}

function violation(rule: SchemaRule, message: string): SchemaViolation {
  return { code: 'SCHEMA_VIOLATION', rule, message: `strict mode rule ${rule}: ${message}` };
}

function quote(s: string): string {
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 117)}...` : s);
}
