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
import { type Principal, assertCanWrite, scopeAssignmentError } from '../../auth/principal.js';
import type { Queryable } from '../../db/database.js';
import { canonicalJson, sha256Hex } from '../../domain/ids.js';
import { conflict, keyUnavailable, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import { appendAudit } from '../../kernel/store/audit-store.js';
import { type EntityShape, findEntityShapes } from '../domain-packs/index.js';
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
import { upsertEntityBatch } from '../entities/index.js';
import { upsertVisibleEntity } from '../entities/index.js';
import { writeFactBatch } from '../facts/index.js';
import {
  type FactInput,
  type FactWriteContext,
  type FactWriteOutcome,
  describe,
  writeFact,
} from '../facts/index.js';
import { predicateSchema } from '../../kernel/validation.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import {
  type SchemaPolicy,
  checkFactKinds,
  schemaPolicyFor,
  schemaViolationError,
} from '../domain-packs/index.js';
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

type Snapshot = z.infer<typeof envelopeSchema>;

interface Item<T> {
  index: number;
  value: T;
}

/** One reconciliation: the parsed snapshot and what every stage of it needs. */
interface Reconciliation {
  tx: Queryable;
  ns: string;
  snap: Snapshot;
  relationsRaw: unknown[];
  bodyHash: string;
  at: Date;
  now: Date;
  principalId: string;
  /** Whose scopes a listed item may carry (scope assignment). */
  principal: Principal;
  visibleScopes: string[] | null;
  policy: SchemaPolicy;
}

/** The snapshot's items, parsed: the valid ones to write and the answers of the others. */
interface ListedItems {
  entities: Item<SnapshotEntity>[];
  entityResults: WriteResult[];
  /** Every key the snapshot lists, valid or not: nothing it names is staled. */
  listedKeys: Set<string>;
  relations: Item<SnapshotRelation>[];
  relationResults: WriteResult[];
}

/** The entity stage's outcome, and what the relation stage needs from it. */
interface WrittenEntities {
  results: WriteResult[];
  shapes: ReadonlyMap<string, EntityShape>;
  /** Keys of the entities written (not rejected). */
  written: string[];
}

/** The relation stage's outcome: the facts of the scope it read and the ones the snapshot keeps. */
interface ReconciledRelations {
  results: WriteResult[];
  scopeFacts: ScopeFact[];
  kept: Set<string>;
}

export class SnapshotService {
  constructor(private readonly scope: RequestScope) {}

  async reconcile(namespace: string, raw: unknown): Promise<SnapshotReconciliation> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    const snap = parseInput(envelopeSchema, raw, 'snapshot');
    const now = new Date();
    return this.scope.db.transaction('reconcileSnapshot', async (tx) => {
      const r = this.reconciliation(tx, ns, snap, now);
      const order = await checkOrder(r);
      if (order.supersededBy !== null) return replayedAnswer(r, order.supersededBy);
      const listed = parseListed(r);
      const entities = await reconcileEntities(r, listed);
      const relations = await reconcileRelations(r, listed, entities);
      const gone = await retireUnlisted(r, relations, listed.listedKeys);
      const answer = {
        entities: toPayload([...listed.entityResults, ...entities.results]),
        relations: toPayload([...listed.relationResults, ...relations.results]),
        ...gone,
      };
      await recordReconciliation(r, order.known, answer);
      return {
        namespace: ns,
        snapshotId: snap.snapshotId,
        scope: snap.scope,
        observedAt: r.at,
        replayed: false,
        ...answer,
      };
    });
  }

  private reconciliation(tx: Queryable, ns: string, snap: Snapshot, now: Date): Reconciliation {
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
    return {
      tx,
      ns,
      snap,
      relationsRaw,
      bodyHash,
      at: snap.observedAt,
      now,
      principalId: this.scope.principal.id,
      principal: this.scope.principal,
      visibleScopes: this.scope.principal.scopes,
      policy: schemaPolicyFor(this.scope),
    };
  }
}

/**
 * Snapshots of a scope apply in order, under the scope's lock: a snapshot id re-sent with
 * another body or one older than the last reconciled is a CONFLICT; an older one re-sent as is
 * is answered as superseded (applying it again would reopen what later ones closed).
 */
async function checkOrder(r: Reconciliation): Promise<{ known: boolean; supersededBy: string | null }> {
  const { tx, ns, snap, at } = r;
  await lockSnapshotScope(tx, ns, snap.scope);
  const known = await findSnapshot(tx, ns, snap.scope, snap.snapshotId);
  const latest = await latestSnapshot(tx, ns, snap.scope);
  if (known && known.bodyHash !== r.bodyHash) {
    throw conflict(
      `Snapshot ${JSON.stringify(snap.snapshotId)} of scope ${JSON.stringify(snap.scope)} was already reconciled with another body; a snapshot id is immutable.`,
    );
  }
  if (known && latest && latest.snapshotId !== known.snapshotId) {
    return { known: true, supersededBy: latest.snapshotId };
  }
  if (!known && latest && at.getTime() < latest.observedAt.getTime()) {
    throw conflict(
      `Snapshot ${JSON.stringify(snap.snapshotId)} was observed at ${at.toISOString()}, before the last reconciled snapshot ${JSON.stringify(latest.snapshotId)} of this scope (${latest.observedAt.toISOString()}); snapshots of a scope apply in order.`,
    );
  }
  return { known: known !== null, supersededBy: null };
}

/** An older snapshot re-sent: every item UNCHANGED, nothing applied. */
function replayedAnswer(r: Reconciliation, latestId: string): SnapshotReconciliation {
  const { ns, snap } = r;
  const note = `already reconciled; superseded by snapshot ${latestId}`;
  return {
    namespace: ns,
    snapshotId: snap.snapshotId,
    scope: snap.scope,
    observedAt: r.at,
    replayed: true,
    entities: toPayload(snap.entities.map((e, i) => unchangedItem(ns, i, keyOf(e), 'Entity', note))),
    relations: toPayload(r.relationsRaw.map((_, i) => unchangedItem(ns, i, null, null, note))),
    closedRelations: [],
    staleEntities: [],
  };
}

/** Parses every item; a bad or repeated one is answered alone but still counts as listed. */
function parseListed(r: Reconciliation): ListedItems {
  const entityResults: WriteResult[] = [];
  const entities: Item<SnapshotEntity>[] = [];
  const listedKeys = new Set<string>();
  const seenKeys = new Set<string>();
  r.snap.entities.forEach((item, index) => {
    const key = keyOf(item);
    if (key !== null) listedKeys.add(key);
    const parsed = snapshotEntitySchema.safeParse(item);
    const refused = parsed.success ? scopeAssignmentError(r.principal, parsed.data.scopes) : null;
    if (!parsed.success) entityResults.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error), key));
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
  const relations: Item<SnapshotRelation>[] = [];
  const seenTriples = new Set<string>();
  r.relationsRaw.forEach((item, index) => {
    const parsed = snapshotRelationSchema.safeParse(item);
    const refused = parsed.success ? scopeAssignmentError(r.principal, parsed.data.scopes) : null;
    if (!parsed.success) relationResults.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error)));
    else if (refused) relationResults.push(rejected(index, refused.code, refused.message));
    else if (seenTriples.has(tripleKey(parsed.data))) {
      relationResults.push({ index, status: 'DUPLICATE', message: 'listed twice in this snapshot' });
    } else {
      seenTriples.add(tripleKey(parsed.data));
      relations.push({ index, value: parsed.data });
    }
  });
  return { entities, entityResults, listedKeys, relations, relationResults };
}

/** Reads the shapes of every entity involved, writes the listed entities, stamps them. */
async function reconcileEntities(r: Reconciliation, listed: ListedItems): Promise<WrittenEntities> {
  const { tx, ns, snap } = r;
  const endpointKeys = listed.relations.flatMap((x) => [x.value.subject, x.value.object]);
  const shapes = await findEntityShapes(
    tx,
    ns,
    [...listed.entities.map((e) => e.value.key), ...endpointKeys],
    r.visibleScopes,
  );
  const results = await writeSnapshotEntities(
    tx,
    ns,
    listed.entities,
    shapes,
    r.at,
    r.policy,
    r.visibleScopes,
  );
  const written = results.filter((x) => x.status !== 'REJECTED').map((x) => x.key!);
  await stampSnapshotEntities(tx, ns, written, snap.scope, snap.snapshotId, r.at);
  return { results, shapes, written };
}

/**
 * Keeps each listed relation an ACTIVE fact of the scope already states at `at` (UPDATED when
 * its attributes change), asserts the others, checks kinds in strict mode, stamps them all.
 */
async function reconcileRelations(
  r: Reconciliation,
  listed: ListedItems,
  entities: WrittenEntities,
): Promise<ReconciledRelations> {
  const { tx, ns, snap } = r;
  const schema = await r.policy.schemaFor(tx, ns);
  const kindOf = kindsAsWritten(listed.entities, entities);
  const scopeFacts = (await findScopeFacts(
    tx,
    ns,
    snap.scope,
    listed.relations.map((x) => ({
      subject: x.value.subject,
      predicate: x.value.relation,
      object: x.value.object,
    })),
    r.at,
    r.visibleScopes,
  )) as ScopeFact[];
  const byTriple = new Map<string, ScopeFact>();
  for (const f of scopeFacts) {
    const t = tripleKey({ subject: f.subject, relation: f.predicate, object: f.object });
    if (!byTriple.has(t)) byTriple.set(t, f);
  }
  const kept = new Set<string>();
  const stamps: SnapshotFactStamp[] = [];
  const results: WriteResult[] = [];
  const toAssert: Item<SnapshotRelation>[] = [];
  for (const { index, value } of listed.relations) {
    const match = byTriple.get(tripleKey(value)) ?? null;
    if (match) kept.add(match.factId);
    const violation = checkFactKinds(schema, {
      subject: value.subject,
      predicate: value.relation,
      object: value.object,
      subjectKind: kindOf.get(value.subject) ?? null,
      objectKind: kindOf.get(value.object) ?? null,
    });
    if (violation) {
      const error = schemaViolationError(violation);
      results.push(rejected(index, error.code, error.message));
    } else if (match) results.push(keepMatch(ns, index, value, match, stamps));
    else toAssert.push({ index, value });
  }
  const asserted = await assertSnapshotRelations(tx, ns, toAssert, {
    now: r.now,
    at: r.at,
    visibleScopes: r.visibleScopes,
  });
  for (const x of asserted) {
    if (x.status === 'REJECTED') continue;
    kept.add(x.key!);
    stamps.push({ factId: x.key!, attributes: null, fresh: true });
  }
  results.push(...asserted);
  await stampSnapshotFacts(tx, ns, stamps, snap.scope, snap.snapshotId, r.visibleScopes);
  return { results, scopeFacts, kept };
}

/** Entity kinds as written: the snapshot's for entities it wrote, the stored ones otherwise. */
function kindsAsWritten(
  listed: readonly Item<SnapshotEntity>[],
  entities: WrittenEntities,
): Map<string, string | null> {
  const kindOf = new Map<string, string | null>();
  for (const [key, s] of entities.shapes) kindOf.set(key, s.placeholder ? null : s.kind);
  const writtenKinds = new Map(listed.map((e) => [e.value.key, e.value.kind]));
  for (const key of entities.written) kindOf.set(key, writtenKinds.get(key)!);
  return kindOf;
}

/** A listed relation a fact already states: stamped, its attributes replaced if they changed. */
function keepMatch(
  ns: string,
  index: number,
  relation: SnapshotRelation,
  match: ScopeFact,
  stamps: SnapshotFactStamp[],
): WriteResult {
  const attrsChanged =
    relation.attributes != null && canonicalJson(relation.attributes) !== canonicalJson(match.attributes);
  stamps.push({ factId: match.factId, attributes: attrsChanged ? relation.attributes! : null, fresh: false });
  return factResult(ns, index, attrsChanged ? 'UPDATED' : 'UNCHANGED', match.factId, null);
}

/** What the snapshot no longer lists: its scope's open facts are closed, its entities staled. */
async function retireUnlisted(
  r: Reconciliation,
  relations: ReconciledRelations,
  listedKeys: ReadonlySet<string>,
): Promise<{ closedRelations: string[]; staleEntities: string[] }> {
  const { tx, ns, snap } = r;
  const toClose = relations.scopeFacts
    .filter((f) => f.snapshotScope === snap.scope && f.validTo === null && !relations.kept.has(f.factId))
    .map((f) => f.factId);
  const closedRelations = await closeSnapshotFacts(tx, ns, toClose, r.at, snap.snapshotId, r.visibleScopes);
  const staleEntities = await markScopeEntitiesStale(
    tx,
    ns,
    snap.scope,
    [...listedKeys],
    snap.snapshotId,
    r.visibleScopes,
  );
  return { closedRelations, staleEntities };
}

/** Records the snapshot with its summary, and audits its first reconciliation. */
async function recordReconciliation(
  r: Reconciliation,
  known: boolean,
  answer: Pick<SnapshotReconciliation, 'entities' | 'relations' | 'closedRelations' | 'staleEntities'>,
): Promise<void> {
  const { tx, ns, snap } = r;
  const summary = {
    entities: countStatuses(answer.entities),
    relations: countStatuses(answer.relations),
    closed: answer.closedRelations.length,
    stale: answer.staleEntities.length,
  };
  await recordSnapshot(tx, ns, {
    scope: snap.scope,
    snapshotId: snap.snapshotId,
    source: snap.source ?? null,
    observedAt: r.at,
    bodyHash: r.bodyHash,
    summary,
    principalId: r.principalId,
  });
  if (known) return;
  await appendAudit(tx, ns, {
    principalId: r.principalId,
    action: 'snapshot.reconcile',
    target: `${snap.scope}#${snap.snapshotId}`,
    summary: { scope: snap.scope, snapshotId: snap.snapshotId, observedAt: r.at.toISOString(), ...summary },
  });
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
  visibleScopes: string[] | null,
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
        visibleScopes,
      );
      return items.map(({ index, value }, n) => {
        const status = statuses[n]!;
        if (status === 'RETRY') return null;
        if (status === 'HIDDEN') return rejectionFor(index, keyUnavailable(), () => {});
        return resultOf(index, value, status);
      });
    },
    async (q, e, index) => resultOf(index, e, await upsertVisibleEntity(q, ns, writeOf(e), visibleScopes)),
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
  { now, at, visibleScopes }: { now: Date; at: Date; visibleScopes: string[] | null },
): Promise<WriteResult[]> {
  const ctx: FactWriteContext = {
    now,
    defaultValidFrom: at,
    observationId: null,
    defaultScopes: [],
    visibleScopes: visibleScopes,
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
        visibleScopes,
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
