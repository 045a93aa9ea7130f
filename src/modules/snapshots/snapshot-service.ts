/**
 * Snapshot reconciliation: a source sends its full list of entities and relations for one scope
 * (every endpoint of one service, every ticket of one board…), and memgate makes the graph agree:
 *
 * - listed entities are created or updated (attributes, when given, are the whole set: keys the
 *   snapshot no longer has are removed, as a new attribute version valid from `observedAt`);
 * - listed relations are kept when an ACTIVE fact with the same subject, relation and object is
 *   in force at `observedAt`, else asserted as a new fact valid from `observedAt`;
 * - relations the scope owns that the snapshot no longer lists are closed (validTo = observedAt),
 *   entities it owns that it no longer lists are marked stale; nothing is deleted;
 * - everything listed records the scope and the snapshot id.
 *
 * `scope` is the stable name of what the source covers (`service:payments`), `snapshotId` the
 * particular snapshot (a commit, an export id). Snapshots of a scope apply in `observedAt` order:
 * an older one than the last reconciled is a CONFLICT, a snapshot id re-sent with another body is
 * a CONFLICT, and re-sending a snapshot changes nothing (every item UNCHANGED). In strict mode
 * every entity and relation is checked against the namespace's packs; a violating item is
 * REJECTED alone and still counts as listed (nothing it names is closed or staled).
 */
import { z } from 'zod';
import { assertCanWrite, scopeAssignmentError, visibilityParam } from '../../auth/principal.js';
import type { Queryable } from '../../db/database.js';
import { canonicalJson, sha256Hex } from '../../domain/ids.js';
import { conflict, keyUnavailable, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import { appendAudit } from '../../kernel/store/audit-store.js';
import { type EntityShape, findEntityShapes } from '../domain-packs/store/entity-shape-store.js';
import type { EntityWrite } from '../../kernel/store/entity-store.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import {
  closeSnapshotFacts,
  findScopeFacts,
  findSnapshot,
  latestSnapshot,
  lockSnapshotScope,
  markScopeEntitiesStale,
  type SnapshotFactStamp,
  recordSnapshot,
  stampSnapshotEntities,
  stampSnapshotFacts,
} from './store/snapshot-store.js';
import {
  type WritePayload,
  type WriteResult,
  rejected,
  rejectionFor,
  toPayload,
  writeSetBased,
} from '../../kernel/batch.js';
import { upsertEntityBatch } from '../entities/entity-batch.js';
import { upsertVisibleEntity } from '../entities/entity-service.js';
import { writeFactBatch } from '../facts/fact-batch.js';
import {
  type FactInput,
  type FactWriteContext,
  type FactWriteOutcome,
  describe,
  predicateSchema,
  writeFact,
} from '../facts/fact-service.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import {
  type SchemaPolicy,
  checkFactKinds,
  schemaPolicyFor,
  schemaViolationError,
} from '../domain-packs/schema-policy.js';
import {
  jsonObjectSchema,
  keySchema,
  kindSchema,
  namespaceSchema,
  scopesSchema,
  titleSchema,
  visibilityScopes,
} from '../../kernel/validation.js';

export const MAX_SNAPSHOT_ENTITIES = 10_000;
export const MAX_SNAPSHOT_RELATIONS = 20_000;

const labelSchema = (what: string, max: number) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), `${what} must not contain control characters`);

const envelopeSchema = z.object({
  snapshotId: labelSchema('snapshotId', 256),
  scope: labelSchema('scope', 512),
  source: z.string().max(256).nullish(),
  observedAt: z.date(),
  entities: z
    .array(z.unknown())
    .max(MAX_SNAPSHOT_ENTITIES, `a snapshot lists at most ${MAX_SNAPSHOT_ENTITIES} entities`),
  relations: z
    .array(z.unknown())
    .max(MAX_SNAPSHOT_RELATIONS, `a snapshot lists at most ${MAX_SNAPSHOT_RELATIONS} relations`)
    .nullish(),
});

const snapshotEntitySchema = z.object({
  key: keySchema,
  kind: kindSchema,
  title: titleSchema.nullish(),
  attributes: jsonObjectSchema.nullish(),
  scopes: scopesSchema.nullish(),
  sourcePath: z.string().max(2048).nullish(),
});

const snapshotRelationSchema = z.object({
  subject: keySchema,
  relation: predicateSchema,
  object: keySchema,
  attributes: jsonObjectSchema.nullish(),
  scopes: scopesSchema.nullish(),
  sourcePath: z.string().max(2048).nullish(),
});

type SnapshotEntity = z.infer<typeof snapshotEntitySchema>;
type SnapshotRelation = z.infer<typeof snapshotRelationSchema>;

export interface SnapshotReconciliation {
  namespace: string;
  snapshotId: string;
  scope: string;
  observedAt: Date;
  /** True when an older, already reconciled snapshot was re-sent: nothing was applied. */
  replayed: boolean;
  entities: WritePayload;
  relations: WritePayload;
  /** Fact ids whose validity this snapshot ended. */
  closedRelations: string[];
  /** Entity keys this snapshot marked stale. */
  staleEntities: string[];
}

type ScopeFact = FactRow & { snapshotScope: string | null; snapshotId: string | null };

export class SnapshotService {
  constructor(private readonly scope: RequestScope) {}

  async reconcile(namespace: string, raw: unknown): Promise<SnapshotReconciliation> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const principal = this.scope.principal;
    assertCanWrite(principal, ns);
    const snap = parseInput(envelopeSchema, raw, 'snapshot');
    const relationsRaw = snap.relations ?? [];
    const bodyHash = sha256Hex(
      canonicalJson({
        snapshotId: snap.snapshotId,
        scope: snap.scope,
        source: snap.source ?? null,
        observedAt: snap.observedAt.toISOString(),
        entities: snap.entities,
        relations: relationsRaw,
      }),
    );
    const policy = schemaPolicyFor(this.scope);
    const now = new Date();
    const at = snap.observedAt;

    return this.scope.db.transaction('reconcileSnapshot', async (tx) => {
      await lockSnapshotScope(tx, ns, snap.scope);
      const known = await findSnapshot(tx, ns, snap.scope, snap.snapshotId);
      const latest = await latestSnapshot(tx, ns, snap.scope);
      if (known && known.bodyHash !== bodyHash) {
        throw conflict(
          `Snapshot ${JSON.stringify(snap.snapshotId)} of scope ${JSON.stringify(snap.scope)} was already reconciled with another body; a snapshot id is immutable.`,
        );
      }
      if (known && latest && latest.snapshotId !== known.snapshotId) {
        // An older snapshot re-sent: applying it again would reopen what later ones closed.
        const note = `already reconciled; superseded by snapshot ${latest.snapshotId}`;
        return {
          namespace: ns,
          snapshotId: snap.snapshotId,
          scope: snap.scope,
          observedAt: at,
          replayed: true,
          entities: toPayload(snap.entities.map((e, i) => unchangedItem(ns, i, keyOf(e), 'Entity', note))),
          relations: toPayload(relationsRaw.map((_, i) => unchangedItem(ns, i, null, null, note))),
          closedRelations: [],
          staleEntities: [],
        };
      }
      if (!known && latest && at.getTime() < latest.observedAt.getTime()) {
        throw conflict(
          `Snapshot ${JSON.stringify(snap.snapshotId)} was observed at ${at.toISOString()}, before the last reconciled snapshot ${JSON.stringify(latest.snapshotId)} of this scope (${latest.observedAt.toISOString()}); snapshots of a scope apply in order.`,
        );
      }

      // ---- parse items (a bad item is rejected alone but still counts as listed)
      const entityResults: WriteResult[] = [];
      const entities: { index: number; value: SnapshotEntity }[] = [];
      const listedKeys = new Set<string>();
      const seenKeys = new Set<string>();
      snap.entities.forEach((item, index) => {
        const key = keyOf(item);
        if (key !== null) listedKeys.add(key);
        const parsed = snapshotEntitySchema.safeParse(item);
        const refused = parsed.success
          ? scopeAssignmentError(this.scope.principal, parsed.data.scopes)
          : null;
        if (!parsed.success)
          entityResults.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error), key));
        else if (refused) entityResults.push(rejected(index, refused.code, refused.message, key));
        else if (seenKeys.has(parsed.data.key)) {
          entityResults.push({
            index,
            status: 'DUPLICATE',
            key: parsed.data.key,
            message: 'listed twice in this snapshot',
          });
        } else {
          seenKeys.add(parsed.data.key);
          entities.push({ index, value: parsed.data });
        }
      });
      const relationResults: WriteResult[] = [];
      const relations: { index: number; value: SnapshotRelation }[] = [];
      const seenTriples = new Set<string>();
      relationsRaw.forEach((item, index) => {
        const parsed = snapshotRelationSchema.safeParse(item);
        const refused = parsed.success
          ? scopeAssignmentError(this.scope.principal, parsed.data.scopes)
          : null;
        if (!parsed.success) relationResults.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error)));
        else if (refused) relationResults.push(rejected(index, refused.code, refused.message));
        else {
          const t = tripleKey(parsed.data);
          if (seenTriples.has(t)) {
            relationResults.push({ index, status: 'DUPLICATE', message: 'listed twice in this snapshot' });
          } else {
            seenTriples.add(t);
            relations.push({ index, value: parsed.data });
          }
        }
      });

      // ---- entities
      const endpointKeys = relations.flatMap((r) => [r.value.subject, r.value.object]);
      const vis = visibilityParam(principal);
      const shapes = await findEntityShapes(
        tx,
        ns,
        [...entities.map((e) => e.value.key), ...endpointKeys],
        vis,
      );
      const entityWrites = await writeSnapshotEntities(tx, ns, entities, shapes, at, policy, vis);
      entityResults.push(...entityWrites);
      const written = entityWrites.filter((r) => r.status !== 'REJECTED').map((r) => r.key!);
      await stampSnapshotEntities(tx, ns, written, snap.scope, snap.snapshotId, at);

      // ---- relations
      const schema = await policy.schemaFor(tx, ns);
      const kindOf = new Map<string, string | null>();
      for (const [key, s] of shapes) kindOf.set(key, s.placeholder ? null : s.kind);
      // Kinds as written: the snapshot's for entities it wrote, the stored ones otherwise.
      const writtenKinds = new Map(entities.map((e) => [e.value.key, e.value.kind]));
      for (const key of written) kindOf.set(key, writtenKinds.get(key)!);
      const scopeFacts = (await findScopeFacts(
        tx,
        ns,
        snap.scope,
        relations.map((r) => ({
          subject: r.value.subject,
          predicate: r.value.relation,
          object: r.value.object,
        })),
        at,
        vis,
      )) as ScopeFact[];
      const byTriple = new Map<string, ScopeFact>();
      for (const f of scopeFacts) {
        const t = tripleKey({ subject: f.subject, relation: f.predicate, object: f.object });
        if (!byTriple.has(t)) byTriple.set(t, f);
      }
      const kept = new Set<string>();
      const stamps: SnapshotFactStamp[] = [];
      const toAssert: { index: number; value: SnapshotRelation }[] = [];
      for (const { index, value: r } of relations) {
        const match = byTriple.get(tripleKey(r)) ?? null;
        if (match) kept.add(match.factId);
        const violation = checkFactKinds(schema, {
          subject: r.subject,
          predicate: r.relation,
          object: r.object,
          subjectKind: kindOf.get(r.subject) ?? null,
          objectKind: kindOf.get(r.object) ?? null,
        });
        if (violation) {
          const error = schemaViolationError(violation);
          relationResults.push(rejected(index, error.code, error.message));
        } else if (match) {
          const attrsChanged =
            r.attributes != null && canonicalJson(r.attributes) !== canonicalJson(match.attributes);
          stamps.push({
            factId: match.factId,
            attributes: attrsChanged ? r.attributes! : null,
            fresh: false,
          });
          relationResults.push(
            factResult(ns, index, attrsChanged ? 'UPDATED' : 'UNCHANGED', match.factId, null),
          );
        } else toAssert.push({ index, value: r });
      }
      const asserted = await assertSnapshotRelations(tx, ns, toAssert, { now, at, vis });
      for (const r of asserted) {
        if (r.status === 'REJECTED') continue;
        kept.add(r.key!);
        stamps.push({ factId: r.key!, attributes: null, fresh: true });
      }
      relationResults.push(...asserted);
      await stampSnapshotFacts(tx, ns, stamps, snap.scope, snap.snapshotId, vis);

      // ---- what the snapshot no longer lists
      const toClose = scopeFacts
        .filter((f) => f.snapshotScope === snap.scope && f.validTo === null && !kept.has(f.factId))
        .map((f) => f.factId);
      const closedRelations = await closeSnapshotFacts(tx, ns, toClose, at, snap.snapshotId, vis);
      const staleEntities = await markScopeEntitiesStale(
        tx,
        ns,
        snap.scope,
        [...listedKeys],
        snap.snapshotId,
        vis,
      );

      const entityPayload = toPayload(entityResults);
      const relationPayload = toPayload(relationResults);
      const summary = {
        entities: countStatuses(entityPayload),
        relations: countStatuses(relationPayload),
        closed: closedRelations.length,
        stale: staleEntities.length,
      };
      await recordSnapshot(tx, ns, {
        scope: snap.scope,
        snapshotId: snap.snapshotId,
        source: snap.source ?? null,
        observedAt: at,
        bodyHash,
        summary,
        principalId: principal.id,
      });
      if (!known) {
        await appendAudit(tx, ns, {
          principalId: principal.id,
          action: 'snapshot.reconcile',
          target: `${snap.scope}#${snap.snapshotId}`,
          summary: {
            scope: snap.scope,
            snapshotId: snap.snapshotId,
            observedAt: at.toISOString(),
            ...summary,
          },
        });
      }
      return {
        namespace: ns,
        snapshotId: snap.snapshotId,
        scope: snap.scope,
        observedAt: at,
        replayed: false,
        entities: entityPayload,
        relations: relationPayload,
        closedRelations,
        staleEntities,
      };
    });
  }
}

/**
 * Upserts the listed entities set-based (entity-batch.ts): strict-mode checks for every item
 * first (pure once the schema is loaded), then one batch; an item the batch leaves, or every
 * item if the batch fails, is written alone under its own savepoint.
 */
async function writeSnapshotEntities(
  tx: Queryable,
  ns: string,
  entities: readonly { index: number; value: SnapshotEntity }[],
  shapes: ReadonlyMap<string, EntityShape>,
  at: Date,
  policy: SchemaPolicy,
  vis: string[] | null,
): Promise<WriteResult[]> {
  const results: WriteResult[] = [];
  const valid: { index: number; value: SnapshotEntity }[] = [];
  for (const item of entities) {
    const e = item.value;
    const before = shapes.get(e.key);
    const violation = await policy.checkEntity(tx, ns, {
      kind: e.kind,
      key: e.key,
      attributes: e.attributes ?? (before && !before.placeholder ? before.attributes : {}),
      complete: true,
    });
    if (violation) {
      const error = schemaViolationError(violation);
      results.push(rejected(item.index, error.code, error.message));
    } else valid.push(item);
  }
  const writeOf = (e: SnapshotEntity): EntityWrite => {
    const before = shapes.get(e.key);
    return {
      key: e.key,
      kind: e.kind,
      title: e.title ?? (before && !before.placeholder ? before.title : e.key),
      attributes: e.attributes ? replacementPatch(before, e.attributes) : null,
      validFrom: at,
      scopes: e.scopes ?? [],
      visibility: visibilityScopes(e.scopes ?? []),
      sourcePath: e.sourcePath ?? null,
      confidence: null,
      origin: 'AGENT',
      pii: false,
      piiCategories: [],
      observationId: null,
    };
  };
  const resultOf = (index: number, e: SnapshotEntity, status: WriteResult['status']): WriteResult => {
    const revived = shapes.get(e.key)?.stale === true;
    return {
      index,
      status: status === 'UNCHANGED' && revived ? 'UPDATED' : status,
      key: e.key,
      id: globalId('Entity', ns, e.key),
      message: revived ? 'no longer stale' : null,
    };
  };
  const written = await writeSetBased(
    tx,
    valid,
    async (q, items) => {
      const statuses = await upsertEntityBatch(
        q,
        ns,
        items.map((i) => writeOf(i.value)),
        vis,
      );
      return items.map(({ index, value }, n) => {
        const status = statuses[n]!;
        if (status === 'RETRY') return null;
        if (status === 'HIDDEN') return rejectionFor(index, keyUnavailable(), () => {});
        return resultOf(index, value, status);
      });
    },
    async (q, e, index) => resultOf(index, e, await upsertVisibleEntity(q, ns, writeOf(e), vis)),
    () => {},
  );
  return [...results, ...written];
}

/**
 * Asserts the relations no fact matched, set-based (fact-batch.ts), as new facts valid from
 * `at`; what the batch leaves is written alone with `writeFact`. Each result's key is the fact id.
 */
async function assertSnapshotRelations(
  tx: Queryable,
  ns: string,
  relations: readonly { index: number; value: SnapshotRelation }[],
  { now, at, vis }: { now: Date; at: Date; vis: string[] | null },
): Promise<WriteResult[]> {
  const ctx: FactWriteContext = {
    now,
    defaultValidFrom: at,
    observationId: null,
    defaultScopes: [],
    visibleScopes: vis,
  };
  const inputOf = (r: SnapshotRelation): FactInput => ({
    subject: r.subject,
    predicate: r.relation,
    object: r.object,
    validFrom: at,
    validTo: null,
    evidence: 'ASSERTED',
    confidence: 1,
    observationIds: null,
    sourcePath: r.sourcePath ?? null,
    scopes: r.scopes ?? null,
    attributes: r.attributes ?? null,
  });
  const resultOf = (index: number, o: FactWriteOutcome) =>
    factResult(ns, index, o.status === 'REINFORCED' ? 'UPDATED' : o.status, o.factId, o.message);
  return writeSetBased(
    tx,
    relations,
    async (q, items) => {
      const answers = await writeFactBatch(
        q,
        ns,
        items.map((i) => ({ input: inputOf(i.value), ctx })),
        vis,
      );
      return items.map(({ index }, n) => {
        const answer = answers[n];
        if (!answer) return null;
        if ('error' in answer) return rejectionFor(index, answer.error, () => {});
        return resultOf(index, answer.outcome);
      });
    },
    async (q, r, index) => resultOf(index, await writeFact(q, ns, inputOf(r), ctx)),
    () => {},
  );
}

/** Attributes are the whole set: keys the entity has but the snapshot lacks are removed. */
function replacementPatch(
  before: EntityShape | undefined,
  attributes: Record<string, unknown>,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...attributes };
  if (before && !before.placeholder) {
    for (const k of Object.keys(before.attributes)) if (!(k in attributes)) patch[k] = null;
  }
  return patch;
}

function tripleKey(r: { subject: string; relation: string; object: string }): string {
  return `${r.subject}\u0000${r.relation}\u0000${r.object}`;
}

function keyOf(raw: unknown): string | null {
  return raw && typeof raw === 'object' && typeof (raw as { key?: unknown }).key === 'string'
    ? (raw as { key: string }).key
    : null;
}

function unchangedItem(
  ns: string,
  index: number,
  key: string | null,
  type: 'Entity' | null,
  message: string,
): WriteResult {
  return { index, status: 'UNCHANGED', key, id: type && key ? globalId(type, ns, key) : null, message };
}

function factResult(
  ns: string,
  index: number,
  status: WriteResult['status'],
  factId: string,
  message: string | null,
): WriteResult {
  return { index, status, id: globalId('Fact', ns, factId), key: factId, message };
}

function countStatuses(p: WritePayload): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of p.results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}
