import { z } from 'zod';
import { assertCanRead, assertCanWrite } from '../../auth/principal.js';
import {
  type DomainPack,
  compilePack,
  domainPackSchema,
  isBuiltinKind,
  mergePacks,
  normalisePack,
  packBodyHash,
  packRef,
  parsePackRef,
} from '../../domain/domain-pack.js';
import { badInput, conflict, forbidden, notFound, parseInput } from '../../errors.js';
import { appendAudit } from '../../kernel/store/audit-store.js';
import {
  type DomainPackRow,
  findDomainPack,
  findDomainPacks,
  insertDomainPack,
  listDomainPacks,
} from './store/domain-pack-store.js';
import {
  findNamespaceSettings,
  findSingleValuedPredicates,
  saveNamespaceSettings,
  setSingleValuedPredicate,
} from './store/namespace-settings-store.js';
import { predicateSchema } from '../../kernel/validation.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { schemaPolicyFor } from './schema-policy.js';
import { namespaceSchema } from '../../kernel/validation.js';

/** Registry-wide events (pack registration) are audited under this pseudo-namespace. */
export const REGISTRY_AUDIT_NAMESPACE = '_system';
export const MAX_PACKS_PER_NAMESPACE = 32;

const packRefsSchema = z
  .array(z.string().max(200))
  .max(MAX_PACKS_PER_NAMESPACE, `at most ${MAX_PACKS_PER_NAMESPACE} packs per namespace`);

export interface PackSummary {
  name: string;
  version: string;
  ref: string;
  bodyHash: string;
  registeredBy: string | null;
  registeredAt: Date;
  kinds: string[];
  relations: string[];
  body: DomainPack;
}

/**
 * Registering packs (admins: the registry is shared by every namespace) and enabling them per
 * namespace. A version is immutable: the same name and version with another body is a
 * CONFLICT, with the same body a no-op.
 */
export class DomainPackService {
  constructor(private readonly scope: RequestScope) {}

  async register(raw: unknown): Promise<{ status: 'CREATED' | 'UNCHANGED' } & Omit<PackSummary, 'body'>> {
    const principal = this.scope.principal;
    if (!principal.admin)
      throw forbidden(
        'Registering a domain pack needs an admin principal (packs are shared by every namespace).',
      );
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw badInput('A domain pack is a JSON object.');
    const pack = normalisePack(parseInput(domainPackSchema, raw, 'domain pack'));
    const bodyHash = packBodyHash(pack);
    const ref = packRef(pack.name, pack.version);
    return this.scope.db.transaction('registerDomainPack', async (tx) => {
      const inserted = await insertDomainPack(tx, {
        name: pack.name,
        version: pack.version,
        body: pack,
        bodyHash,
        registeredBy: principal.id,
      });
      if (!inserted) {
        const existing = await findDomainPack(tx, pack.name, pack.version);
        if (!existing) throw new Error(`domain pack ${ref} vanished during registration`);
        if (existing.bodyHash !== bodyHash) {
          throw conflict(
            `Domain pack ${ref} is already registered with a different body; a version is immutable — register it as a new version.`,
            { ref, registeredBodyHash: existing.bodyHash, bodyHash },
          );
        }
        return { status: 'UNCHANGED' as const, ...summarise(existing) };
      }
      await appendAudit(tx, REGISTRY_AUDIT_NAMESPACE, {
        principalId: principal.id,
        action: 'domainPack.register',
        target: ref,
        summary: { ref, bodyHash, kinds: pack.kinds.length, relations: pack.relations.length },
      });
      return { status: 'CREATED' as const, ...summarise(inserted) };
    });
  }

  async list(name: string | null): Promise<PackSummary[]> {
    const rows = await listDomainPacks(this.scope.db, name ?? null, 500);
    return rows.map((r) => ({ ...summarise(r), body: r.body as DomainPack }));
  }

  /**
   * Enables packs (`name@version`) and sets strict mode for a namespace. Every pack must be
   * registered, one version per pack name, and no two packs may declare the same kind or
   * relation. Changes are audited in the namespace; an identical configuration is UNCHANGED.
   */
  async configure(namespace: string, refs: unknown, strict: boolean) {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const principal = this.scope.principal;
    assertCanWrite(principal, ns);
    const list = [...new Set(parseInput(packRefsSchema, refs, 'packs'))];
    const parsed = list.map((ref) => {
      const p = parsePackRef(ref);
      if (!p)
        throw badInput(
          `${JSON.stringify(ref)} is not a pack reference; write name@version (e.g. services@1.0.0).`,
        );
      return p;
    });
    const byName = new Map<string, string>();
    for (const p of parsed) {
      const other = byName.get(p.name);
      if (other)
        throw badInput(
          `Packs ${packRef(p.name, other)} and ${packRef(p.name, p.version)} are two versions of one pack; enable one.`,
        );
      byName.set(p.name, p.version);
    }
    const result = await this.scope.db.transaction('configureNamespace', async (tx) => {
      const rows = await findDomainPacks(tx, parsed);
      const missing = list.filter((_, i) => rows[i] === null);
      if (missing.length > 0)
        throw notFound(`Domain pack${missing.length > 1 ? 's' : ''} not registered: ${missing.join(', ')}.`);
      const compiledPacks = rows.map((r) => compilePack(r!.body as DomainPack));
      const { schema, conflicts } = mergePacks(ns, strict, compiledPacks);
      if (conflicts.length > 0) {
        const c = conflicts[0]!;
        throw conflict(
          `Packs ${c.packs[0]} and ${c.packs[1]} both declare the ${c.what} "${c.name}"; enable only one of them.`,
          { conflicts },
        );
      }
      const before = await findNamespaceSettings(tx, ns);
      const unchanged = before !== null && before.strict === strict && sameList(before.packs, list);
      const saved = unchanged ? before : await saveNamespaceSettings(tx, ns, list, strict);
      if (!unchanged) {
        await appendAudit(tx, ns, {
          principalId: principal.id,
          action: 'namespace.configure',
          target: ns,
          summary: {
            packs: list,
            strict,
            previous: before ? { packs: before.packs, strict: before.strict } : null,
          },
        });
      }
      const kinds = [...new Set([...schema.kinds.values()].map((k) => k.kind))].sort();
      const relations = [...schema.relations.keys()].sort();
      const declared = new Set([...kinds, ...schema.kinds.keys()]);
      const warnings = [...schema.relations.values()].flatMap((r) =>
        [...r.fromKinds, ...r.toKinds]
          .filter((k, i, all) => all.indexOf(k) === i && !declared.has(k) && !isBuiltinKind(k))
          .map(
            (k) => `relation "${r.relation}" (${r.pack}) names kind "${k}", which no enabled pack declares`,
          ),
      );
      return {
        status: before === null ? 'CREATED' : unchanged ? 'UNCHANGED' : 'UPDATED',
        namespace: ns,
        packs: saved.packs,
        strict: saved.strict,
        kinds,
        relations,
        warnings,
        updatedAt: saved.updatedAt,
      };
    });
    schemaPolicyFor(this.scope).forget(ns);
    return result;
  }

  /**
   * Sets how many objects a predicate holds at a time for a subject in this namespace: ONE makes
   * overlapping values without a supersession an open conflict (`conflict: true`, both served,
   * marked); MANY lifts that. Packs declare the same with `cardinality: "one"`. Audited.
   */
  async setPredicateCardinality(namespace: string, predicate: string, cardinality: 'ONE' | 'MANY') {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    const name = parseInput(predicateSchema, predicate, 'predicate');
    return this.scope.db.transaction('setPredicateCardinality', async (tx) => {
      const { before, after } = await setSingleValuedPredicate(tx, ns, name, cardinality === 'ONE');
      const unchanged = before.includes(name) === after.includes(name);
      if (!unchanged)
        await appendAudit(tx, ns, {
          principalId: this.scope.principal.id,
          action: 'namespace.predicate_cardinality',
          target: ns,
          summary: { predicate: name, cardinality },
        });
      return {
        status: unchanged ? 'UNCHANGED' : 'UPDATED',
        namespace: ns,
        predicate: name,
        cardinality,
        singleValuedPredicates: after,
      };
    });
  }

  /** What a namespace has enabled (defaults when never configured). */
  async settings(namespace: string) {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanRead(this.scope.principal, ns);
    const schema = await schemaPolicyFor(this.scope).schemaFor(this.scope.db, ns);
    const kinds = [...new Set([...schema.kinds.values()].map((k) => k.kind))].sort();
    return {
      namespace: ns,
      packs: schema.packs,
      strict: schema.strict,
      singleValuedPredicates: await findSingleValuedPredicates(this.scope.db, ns),
      kinds,
      relations: [...schema.relations.values()]
        .map((r) => ({
          relation: r.relation,
          pack: r.pack,
          fromKinds: r.fromKinds,
          toKinds: r.toKinds,
          temporal: r.temporal,
          cardinality: r.cardinality,
        }))
        .sort((a, b) => (a.relation < b.relation ? -1 : a.relation > b.relation ? 1 : 0)),
    };
  }
}

function summarise(row: DomainPackRow): Omit<PackSummary, 'body'> {
  const body = row.body as DomainPack;
  return {
    name: row.name,
    version: row.version,
    ref: packRef(row.name, row.version),
    bodyHash: row.bodyHash,
    registeredBy: row.registeredBy,
    registeredAt: row.registeredAt,
    kinds: body.kinds.map((k) => k.kind),
    relations: body.relations.map((r) => r.relation),
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
