import { z } from 'zod';
import { type Principal, assertCanWrite, scopeAssignmentError } from '../../auth/principal.js';
import type { Queryable } from '../../db/database.js';
import { chunkMarkdown } from '../../domain/chunking.js';
import { observationId as computeObservationId } from '../../domain/ids.js';
import { checkObservationLimits } from '../../domain/limits.js';
import { type PiiMark, combinePii, detectPii, detectPiiInJson } from '../../domain/pii.js';
import { KEY_UNAVAILABLE_MESSAGE, MemgateError, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import {
  type ContextWindow,
  batchContextTexts,
  findContextWindow,
  indexObservationContext,
} from '../../kernel/store/context-index-store.js';
import { findEntitiesByKeys } from '../../kernel/store/entity-store.js';
import { linkObservationEntities } from '../../kernel/store/entity-link-store.js';
import { type MentionWrite, insertMentions } from '../../kernel/store/mention-store.js';
import {
  type ObservationChunkWrite,
  type ObservationNodeWrite,
  type ObservationStatus,
  type ObservationWrite,
  findRecordedObservations,
  insertObservationChunks,
  insertObservationNodes,
  insertObservations,
  setObservationStatus,
  setObservationStatuses,
} from '../../kernel/store/observation-store.js';
import {
  type AssertionResult,
  type WritePayload,
  type WriteResult,
  rejected,
  rejectionFor,
  toPayload,
  withSavepoint,
  writeItems,
  writeSetBased,
} from '../../kernel/batch.js';
import { MAX_BATCH } from '../entities/index.js';
import { describe } from '../facts/index.js';
import {
  type EpisodeChunkDraft,
  type ParsedAssertion,
  type ProjectionContext,
  type ProjectionOutcome,
  parseAssertions,
  projectAssertions,
} from './projection.js';
import { projectAssertionBatch } from './projection-batch.js';
import { type ChunkLanguage, chunkLanguageFor, languageTextOf } from '../text-search/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { planWritesForAnyNamespace } from '../../kernel/store/write-plans.js';
import { schemaPolicyFor } from '../domain-packs/index.js';
import { extractFromObservations } from '../extraction/index.js';
import { namespaceSchema, visibilityScopes } from '../../kernel/validation.js';

export const refInputSchema = z.object({
  type: z.string().min(1, 'type must not be empty').max(128),
  id: z.string().min(1, 'id must not be empty').max(512),
});

export const sourceInputSchema = z.object({
  system: z.string().min(1, 'source.system must not be empty').max(256),
  stream: z.string().max(512).nullish(),
  externalId: z.string().max(512).nullish(),
});

/** Shape only; sizes, counts, kind and scope syntax are the limits' job (coded rejections). */
export const observationInputSchema = z.object({
  source: sourceInputSchema,
  kind: z.string(),
  occurredAt: z.date(),
  actor: refInputSchema.nullish(),
  subject: refInputSchema.nullish(),
  scopes: z.array(z.string()).nullish(),
  content: z.string().nullish(),
  data: z.unknown().optional(),
  assertions: z.array(z.unknown()).nullish(),
  provenance: z.unknown().optional(),
});
export type ObservationInput = z.infer<typeof observationInputSchema>;

/** Content longer than this is cut into several chunks (headings, then gentle boundaries). */
export const OBSERVATION_CHUNK_CHARS = 2000;
const OBSERVATION_CHUNK_OVERLAP = 150;
const MAX_STATUS_REASON = 4000;

/** One new observation, everything computed before the transaction. */
export interface Draft {
  index: number;
  id: string;
  row: ObservationWrite;
  node: ObservationNodeWrite | null;
  chunks: ObservationChunkWrite[];
  /** null for a plain observation (no assertions): it takes the multi-row path. */
  assertions: ParsedAssertion[] | null;
  episodeChunks: Map<number, EpisodeChunkDraft[]>;
  warning: string | null;
}

/**
 * recordObservations: observations are evidence, recorded once (a deterministic id makes a
 * repeat DUPLICATE and changes nothing), indexed as searchable chunks owned by a per-observation
 * node entity (kind `observation`, key = observation id), and projected (assertions) in the
 * same transaction.
 *
 * Throughput: one statement finds the ids already known, one embedder call covers every text
 * of the request, and observations are written set-based (writeSetBased: multi-row statements
 * under one savepoint), the plain ones first, then those with assertions; only strict
 * namespaces and episodes take a savepoint per observation. Should a multi-row write fail, its
 * items are retried one by one so only the bad one is lost.
 */
export class ObservationService {
  constructor(private readonly scope: RequestScope) {}

  async recordObservations(namespace: string, inputs: unknown[]): Promise<WritePayload> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    if (inputs.length > MAX_BATCH) {
      return toPayload(
        inputs.map((_, i) => rejected(i, 'LIMIT_EXCEEDED', `A batch holds at most ${MAX_BATCH} items.`)),
      );
    }
    const now = new Date();
    const results: WriteResult[] = [];
    const candidates: { index: number; id: string; input: ObservationInput }[] = [];
    const firstIndexOf = new Map<string, number>();
    inputs.forEach((raw, index) => {
      const parsed = observationInputSchema.safeParse(raw);
      if (!parsed.success) {
        results.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error)));
        return;
      }
      const input = parsed.data;
      const screened = screenObservation(ns, index, input, firstIndexOf, this.scope.principal);
      if ('result' in screened) results.push(screened.result);
      else candidates.push({ index, id: screened.id, input });
    });

    const known = await findRecordedObservations(
      this.scope.db,
      ns,
      candidates.map((c) => c.id),
      this.scope.principal.scopes,
    );
    const actorNames = await this.actorNames(
      ns,
      candidates.filter((c) => !known.visible.has(c.id) && !known.hidden.has(c.id)),
    );
    const drafts: Draft[] = [];
    const language = await chunkLanguageFor(this.scope, ns);
    for (const c of candidates) {
      if (known.visible.has(c.id)) results.push(duplicateOf(ns, c.index, c.id, null));
      else if (known.hidden.has(c.id)) results.push(collision(c.index));
      else drafts.push(draftOf(c.index, c.id, c.input, now, actorNames, language, this.scope.principal));
    }
    await withBatchContext(drafts, await findContextWindow(this.scope.db, ns));
    await this.embed(drafts);

    const written = drafts.length
      ? await this.scope.db.transaction('recordObservations', async (tx) => {
          await planWritesForAnyNamespace(tx);
          return this.writeDrafts(tx, ns, drafts, now);
        })
      : [];
    return toPayload([...results, ...written]);
  }

  private async writeDrafts(tx: Queryable, ns: string, drafts: Draft[], now: Date): Promise<WriteResult[]> {
    const one = (q: Queryable, d: Draft) => this.writeOne(q, ns, d, now);
    const onUnexpected = (error: unknown) => this.logUnexpected(error);
    const onItemFailure = (q: Queryable, d: Draft, _index: number, error: unknown) =>
      this.keepAsFailed(q, ns, d, error);
    const plain = drafts.filter((d) => d.assertions === null);
    const results = await writeSetBased(
      tx,
      itemsOf(plain),
      (q, items) => this.writePlain(q, ns, valuesOf(items)),
      one,
      onUnexpected,
      { onItemFailure },
    );
    const projected = drafts.filter((d) => d.assertions !== null);
    // Strict mode checks each assertion against what the ones before it wrote; episodes
    // rewrite their chunks: those observations are projected one at a time.
    const strict = projected.length > 0 && (await schemaPolicyFor(this.scope).schemaFor(tx, ns)).strict;
    const together = strict ? [] : projected.filter((d) => !d.assertions!.some((a) => a.kind === 'episode'));
    results.push(
      ...(await writeSetBased(
        tx,
        itemsOf(together),
        (q, items) => this.writeProjected(q, ns, valuesOf(items), now),
        one,
        onUnexpected,
        { onItemFailure },
      )),
    );
    const alone = projected.filter((d) => !together.includes(d));
    results.push(...(await writeItems(tx, itemsOf(alone), one, onUnexpected, onItemFailure)));
    const written = writtenIds(results);
    await this.deriveIndex(tx, ns, drafts, written);
    await extractFromObservations(
      this.scope,
      tx,
      ns,
      drafts.filter((d) => written.has(d.id)).map((d) => d.row),
    );
    return results;
  }

  /** Plain observations (no assertions): one statement per table for the rows and their index. */
  private async writePlain(tx: Queryable, ns: string, drafts: Draft[]): Promise<WriteResult[]> {
    const inserted = await insertObservations(
      tx,
      ns,
      drafts.map((d) => d.row),
    );
    await writeIndex(
      tx,
      ns,
      drafts.filter((d) => inserted.has(d.id)),
    );
    const results: WriteResult[] = [];
    for (const d of drafts) {
      results.push(inserted.has(d.id) ? this.created(ns, d, d.warning) : await this.notInserted(tx, ns, d));
    }
    return results;
  }

  /**
   * Observations with assertions, all at once: one statement per table for the observations
   * and their chunks, the set-based projection, one for the statuses and one for the mentions.
   */
  private async writeProjected(
    tx: Queryable,
    ns: string,
    drafts: Draft[],
    now: Date,
  ): Promise<WriteResult[]> {
    const inserted = await insertObservations(
      tx,
      ns,
      drafts.map((d) => ({ ...d.row, status: 'RECEIVED' as const })),
    );
    const fresh = drafts.filter((d) => inserted.has(d.id));
    await writeIndex(tx, ns, fresh);
    const outcomes = await projectAssertionBatch(
      tx,
      ns,
      fresh.map((d) => ({ ctx: this.projectionContext(ns, d, now), assertions: d.assertions! })),
      this.scope.principal.scopes,
    );
    const settled = fresh.map((d, n) => settle(d, outcomes[n]!));
    await setObservationStatuses(
      tx,
      ns,
      settled.map((s, n) => ({ observationId: fresh[n]!.id, status: s.status, reason: s.reason })),
    );
    await insertMentions(
      tx,
      ns,
      fresh.flatMap((d, n) => outcomes[n]!.mentions.filter((m) => m.entityKey !== d.id)),
    );
    const results: WriteResult[] = [];
    for (const d of drafts) {
      const n = fresh.indexOf(d);
      if (n < 0) {
        results.push(await this.notInserted(tx, ns, d));
        continue;
      }
      const outcome = outcomes[n]!;
      const partial = outcome.results.some((a) => a.status === 'REJECTED');
      results.push({
        ...this.created(ns, d, settled[n]!.message),
        ...(partial ? { status: 'PARTIAL' } : {}),
        assertions: outcome.results,
      });
    }
    return results;
  }

  private projectionContext(ns: string, d: Draft, now: Date): ProjectionContext {
    return {
      namespace: ns,
      observationId: d.id,
      kind: d.row.kind,
      occurredAt: d.row.occurredAt,
      now,
      scopes: d.row.scopes,
      sourcePath: d.node?.sourcePath ?? sourcePathOf(d.row.provenance),
      episodeChunks: d.episodeChunks,
      onUnexpected: (error) => this.logUnexpected(error),
      policy: schemaPolicyFor(this.scope),
      visibleScopes: this.scope.principal.scopes,
    };
  }

  /**
   * The batch-wide stages after the rows are in: contextual indexing, then entity linking. Both
   * are derived data (`memgate reindex` rebuilds them), so a failure costs the derivation,
   * never the evidence: it is logged and the batch still commits.
   */
  private async deriveIndex(tx: Queryable, ns: string, drafts: Draft[], written: Set<string>): Promise<void> {
    try {
      await withSavepoint(tx, 'derive', (q) => deriveObservationIndex(q, ns, drafts, written));
    } catch (error) {
      this.logUnexpected(error);
    }
  }

  /**
   * One observation (under the savepoint of writeItems): record, index, project, settle the
   * status. Should it throw, keepAsFailed answers for it.
   */
  private async writeOne(tx: Queryable, ns: string, d: Draft, now: Date): Promise<WriteResult> {
    const projected = d.assertions !== null;
    const inserted = await insertObservations(tx, ns, [
      { ...d.row, status: projected ? 'RECEIVED' : 'PROCESSED' },
    ]);
    if (!inserted.has(d.id)) return this.notInserted(tx, ns, d);
    await writeIndex(tx, ns, [d]);
    // The node itself is not a mention: chunks lead back through their observation_id.
    const mentions: MentionWrite[] = [];
    let message = d.warning;
    let assertionResults: AssertionResult[] | null = null;
    if (d.assertions !== null) {
      const outcome = await projectAssertions(tx, this.projectionContext(ns, d, now), d.assertions);
      mentions.push(...outcome.mentions.filter((m) => m.entityKey !== d.id));
      assertionResults = outcome.results;
      const settled = settle(d, outcome);
      message = settled.message;
      await setObservationStatus(tx, ns, d.id, settled.status, settled.reason);
    }
    await insertMentions(tx, ns, mentions);
    const partial = assertionResults?.some((a) => a.status === 'REJECTED') ?? false;
    return {
      ...this.created(ns, d, message),
      ...(partial ? { status: 'PARTIAL' } : {}),
      assertions: assertionResults,
    };
  }

  /**
   * Processing broke unexpectedly: the observation is still evidence, so it is kept alone with
   * status FAILED and the reason. Only if even that fails is the item REJECTED.
   */
  private async keepAsFailed(tx: Queryable, ns: string, d: Draft, error: unknown): Promise<WriteResult> {
    const reason =
      error instanceof MemgateError
        ? `${error.code}: ${error.message}`
        : 'processing failed with an internal error';
    if (!(error instanceof MemgateError)) this.logUnexpected(error);
    try {
      return await withSavepoint(tx, 'item', async (q) => {
        const inserted = await insertObservations(q, ns, [
          { ...d.row, status: 'FAILED', statusReason: truncate(reason, MAX_STATUS_REASON) },
        ]);
        if (!inserted.has(d.id)) return this.notInserted(q, ns, d);
        // Stored as evidence, nothing of it applied: a partial success, not a clean CREATED.
        return { ...this.created(ns, d, `FAILED: ${reason}`), status: 'PARTIAL' as const };
      });
    } catch (second) {
      return rejectionFor(d.index, error instanceof MemgateError ? error : second, (e) =>
        this.logUnexpected(e),
      );
    }
  }

  /**
   * Embeds every text of the request in one call, before the transaction. If the embedder
   * fails, the chunks are stored without vectors (still found lexically) and the items say
   * so; `memgate reindex` fills them in later. Evidence is never lost to an embedder outage.
   */
  private async embed(drafts: Draft[]): Promise<void> {
    const slots: { set: (v: number[] | null) => void; text: string }[] = [];
    for (const d of drafts) {
      for (const c of d.chunks) slots.push({ text: c.text, set: (v) => (c.embedding = v) });
      for (const chunks of d.episodeChunks.values()) {
        for (const c of chunks) slots.push({ text: c.text, set: (v) => (c.embedding = v) });
      }
    }
    if (slots.length === 0) return;
    try {
      const vectors = await this.scope.deps.embedder.embed(slots.map((s) => s.text));
      if (vectors.length !== slots.length)
        throw new Error(`embedder returned ${vectors.length} vectors for ${slots.length} texts`);
      for (const [i, slot] of slots.entries()) slot.set(vectors[i]!);
    } catch (error) {
      this.scope.deps.logger.warn('embedding failed; observations indexed without vectors', {
        error: String(error),
      });
      for (const d of drafts) {
        if (d.chunks.length > 0 || d.episodeChunks.size > 0) {
          d.warning = 'indexed without an embedding (the embedder failed); run `memgate reindex` to add it';
        }
      }
    }
  }

  private created(ns: string, d: Draft, message: string | null): WriteResult {
    return { index: d.index, status: 'CREATED', id: globalId('Observation', ns, d.id), key: d.id, message };
  }

  /** A concurrent writer recorded the same observation first: a DUPLICATE only if it is visible. */
  private async notInserted(tx: Queryable, ns: string, d: Draft): Promise<WriteResult> {
    const known = await findRecordedObservations(tx, ns, [d.id], this.scope.principal.scopes);
    return known.visible.has(d.id) ? duplicateOf(ns, d.index, d.id, null) : collision(d.index);
  }

  /**
   * Titles of the actors' entities (key = actor id, or "<type>:<id>"), for chunk titles that
   * read "message · Bob Okafor · …" rather than "bob". Only entities everyone may see lend
   * their title: a chunk must not reveal a restricted entity's name to its own readers.
   */
  private async actorNames(
    ns: string,
    candidates: { input: ObservationInput }[],
  ): Promise<Map<string, string>> {
    const keys = new Set<string>();
    for (const { input } of candidates) {
      if (!input.actor) continue;
      keys.add(input.actor.id);
      keys.add(`${input.actor.type}:${input.actor.id}`);
    }
    const names = new Map<string, string>();
    if (keys.size === 0) return names;
    const rows = await findEntitiesByKeys(this.scope.db, ns, [...keys], []);
    for (const row of rows) if (row?.title) names.set(row.key, row.title);
    return names;
  }

  private logUnexpected(error: unknown): void {
    this.scope.deps.logger.error('recordObservations item failed', { error: String(error) });
  }
}

/** The drafts as the batch writer's items. */
function itemsOf(drafts: readonly Draft[]): { index: number; value: Draft }[] {
  return drafts.map((d) => ({ index: d.index, value: d }));
}

function valuesOf(items: readonly { value: Draft }[]): Draft[] {
  return items.map((i) => i.value);
}

/** An observation's status after its projection, the reason, and the item's message. */
function settle(
  d: Draft,
  outcome: ProjectionOutcome,
): { status: ObservationStatus; reason: string | null; message: string | null } {
  if (outcome.rejected.length === 0) return { status: 'PROCESSED', reason: null, message: d.warning };
  const status: ObservationStatus = outcome.applied === 0 ? 'FAILED' : 'PARTIALLY_PROCESSED';
  const reason = truncate(
    `${outcome.rejected.length} of ${outcome.results.length} assertions rejected: ${outcome.rejected
      .map((r) => `[${r.index}] ${r.kind} ${r.code}: ${r.message}`)
      .join('; ')}`,
    MAX_STATUS_REASON,
  );
  return { status, reason, message: [`${status}: ${reason}`, d.warning].filter(Boolean).join(' | ') };
}

/** The one collision answer: no id, no key, the documented code and message. */
/**
 * One parsed item of a batch, screened before any SQL: over a limit it is REJECTED, a repeat of
 * an earlier item of the same batch is DUPLICATE (`firstIndexOf` remembers the batch's ids);
 * otherwise its id. recordObservations and the bulk import screen alike.
 */
export function screenObservation(
  ns: string,
  index: number,
  input: ObservationInput,
  firstIndexOf: Map<string, number>,
  principal: Principal,
): { id: string } | { result: WriteResult } {
  const violations = checkObservationLimits(input);
  if (violations.length > 0) {
    return {
      result: rejected(
        index,
        violations[0]!.code,
        violations.map((v) => `${v.code}: ${v.message}`).join('; '),
      ),
    };
  }
  const refused = scopeAssignmentError(principal, input.scopes);
  if (refused) return { result: rejected(index, refused.code, refused.message) };
  const id = computeObservationId(ns, input.source, {
    kind: input.kind,
    occurredAt: input.occurredAt,
    content: input.content,
    data: input.data,
    actor: input.actor,
    subject: input.subject,
  });
  const first = firstIndexOf.get(id);
  if (first !== undefined) return { result: duplicateOf(ns, index, id, `same observation as item ${first}`) };
  firstIndexOf.set(id, index);
  return { id };
}

/** The answer for an observation already recorded (or listed twice in the batch). */
export function duplicateOf(ns: string, index: number, id: string, message: string | null): WriteResult {
  return { index, status: 'DUPLICATE', id: globalId('Observation', ns, id), key: id, message };
}

/** A visible id is a DUPLICATE; a hidden row's id answers as every collision does. */
export function collision(index: number): WriteResult {
  return rejected(index, 'KEY_UNAVAILABLE', KEY_UNAVAILABLE_MESSAGE);
}

/** Everything about one new observation that needs no database: row, PII, chunks, assertions. */
export function draftOf(
  index: number,
  id: string,
  input: ObservationInput,
  now: Date,
  actorNames: ReadonlyMap<string, string>,
  language: ChunkLanguage,
  principal: Principal,
): Draft {
  const scopes = [...new Set(input.scopes ?? [])].sort();
  const visibility = visibilityScopes(scopes);
  const content = input.content ?? null;
  const data = input.data ?? null;
  const pii: PiiMark = combinePii(detectPii(content ?? ''), detectPiiInJson(data));
  const row: ObservationWrite = {
    observationId: id,
    sourceSystem: input.source.system,
    sourceStream: input.source.stream || null,
    sourceExternalId: input.source.externalId || null,
    kind: input.kind,
    occurredAt: input.occurredAt,
    recordedAt: now,
    actorType: input.actor?.type ?? null,
    actorId: input.actor?.id ?? null,
    subjectType: input.subject?.type ?? null,
    subjectId: input.subject?.id ?? null,
    scopes,
    visibility,
    content,
    data,
    provenance: input.provenance ?? null,
    status: 'PROCESSED',
    statusReason: null,
    sessionId: sessionIdOf(data, input.source.stream),
    pii: pii.pii,
    piiCategories: pii.categories,
  };
  const sourcePath = sourcePathOf(input.provenance);
  const actor = input.actor
    ? (assertedTitle(input, input.actor) ??
      actorNames.get(input.actor.id) ??
      actorNames.get(`${input.actor.type}:${input.actor.id}`) ??
      input.actor.id)
    : null;
  const title = observationTitle(input.kind, actor, input.occurredAt);
  const actorWords = [...new Set([actor, input.actor?.id].filter((w): w is string => Boolean(w)))];
  const pieces = contentPieces(content);
  const chunks: ObservationChunkWrite[] = pieces.map((piece, order) => {
    const mark = pieces.length === 1 ? pii : detectPii(piece.text);
    return {
      nodeKey: id,
      order,
      kind: input.kind,
      title,
      heading: piece.heading,
      text: piece.text,
      // The actor's name and id stay searchable even when the text does not repeat them.
      searchText: [...actorWords.filter((w) => !piece.text.includes(w)), piece.text].join('\n'),
      sourcePath,
      // Kept small: every pair is a GIN entry. Source and actor are on the observation.
      meta: compact({ observationId: id, sessionId: row.sessionId }),
      scopes,
      visibility,
      observationId: id,
      occurredAt: input.occurredAt,
      pii: mark.pii,
      piiCategories: mark.categories,
      embedding: null,
      tsConfig: language(languageTextOf(piece.heading, piece.text)),
    };
  });
  const node: ObservationNodeWrite | null =
    chunks.length > 0
      ? {
          key: id,
          title,
          scopes,
          visibility,
          sourcePath,
          provenance: input.provenance ?? null,
          lastSeen: input.occurredAt,
        }
      : null;
  const hasAssertions = (input.assertions?.length ?? 0) > 0;
  const assertions = hasAssertions
    ? parseAssertions(
        input.assertions!,
        { observationId: id, kind: input.kind, occurredAt: input.occurredAt },
        principal,
      )
    : null;
  const episodeChunks = new Map<number, EpisodeChunkDraft[]>();
  for (const [i, a] of (assertions ?? []).entries()) {
    if (a.ok && a.kind === 'episode') {
      episodeChunks.set(
        i,
        contentPieces(a.value.text).map((p, order) => ({
          order,
          heading: p.heading,
          text: p.text,
          embedding: null,
          tsConfig: language(languageTextOf(p.heading, p.text)),
        })),
      );
    }
  }
  return { index, id, row, node, chunks, assertions, episodeChunks, warning: null };
}

/** Short text stays one chunk as written; long text is cut by the document chunker. */
function contentPieces(text: string | null): { heading: string | null; text: string }[] {
  if (text === null || text.trim() === '') return [];
  if (text.length <= OBSERVATION_CHUNK_CHARS) return [{ heading: null, text }];
  return chunkMarkdown(text, {
    maxChars: OBSERVATION_CHUNK_CHARS,
    overlapChars: OBSERVATION_CHUNK_OVERLAP,
  }).map((c) => ({ heading: c.heading || null, text: c.text }));
}

async function writeIndex(tx: Queryable, ns: string, drafts: Draft[]): Promise<void> {
  await insertObservationNodes(
    tx,
    ns,
    drafts.flatMap((d) => (d.node ? [d.node] : [])),
  );
  await insertObservationChunks(
    tx,
    ns,
    drafts.flatMap((d) => d.chunks),
  );
}

/**
 * The derived stages for rows another write path inserted (the bulk import): contextual
 * indexing of the turns' neighbours, then entity linking, in the caller's transaction.
 * `neighbours: 'later'` leaves the older turns' re-indexing to whoever re-indexes the load's
 * turns once at its end (an open bulk import); the new turns were indexed in context as they
 * were inserted.
 */
export async function deriveObservationIndex(
  tx: Queryable,
  ns: string,
  drafts: Draft[],
  written: Set<string>,
  neighbours: 'now' | 'later' = 'now',
): Promise<void> {
  if (written.size === 0) return;
  if (neighbours === 'now') await indexInContext(tx, ns, drafts, written);
  await linkEntities(tx, ns, written);
}

/** Keys of the observations a batch recorded (CREATED, or kept with a PARTIAL outcome). */
function writtenIds(results: WriteResult[]): Set<string> {
  const ids = new Set<string>();
  for (const r of results) {
    if ((r.status === 'CREATED' || r.status === 'PARTIAL') && typeof r.key === 'string') ids.add(r.key);
  }
  return ids;
}

/**
 * Stage "entity linking": the observations written are linked to their actor and subject
 * entities and to the known entities their text names, one statement per batch (after the
 * projections, so entities asserted in the same batch are known); see store/entity-link-store.ts.
 */
async function linkEntities(tx: Queryable, ns: string, written: Set<string>): Promise<void> {
  await linkObservationEntities(tx, ns, [...written]);
}

/**
 * Stage "contextual indexing", before the insert: the turns' search texts within the batch
 * (neighbours written in the same batch), so most chunks are indexed once, already in context.
 */
export async function withBatchContext(drafts: Draft[], window: ContextWindow): Promise<void> {
  const single = drafts.filter((d) => d.chunks.length === 1 && d.row.sessionId !== null);
  const texts = batchContextTexts(
    single.map((d) => ({
      id: d.id,
      sessionId: d.row.sessionId,
      occurredAt: d.row.occurredAt,
      content: d.row.content,
      visibility: d.row.visibility,
      ownSearchText: d.chunks[0]!.searchText,
    })),
    window,
  );
  for (const d of single) {
    const text = texts.get(d.id);
    if (text === undefined) continue;
    const chunk = d.chunks[0]!;
    chunk.ownSearchText = chunk.searchText;
    chunk.searchText = text;
  }
}

/**
 * Stage "contextual indexing": turns of a session are indexed with their neighbours' text
 * (the namespace's window), one statement per batch; see store/context-index-store.ts.
 */
async function indexInContext(
  tx: Queryable,
  ns: string,
  drafts: Draft[],
  written: Set<string>,
): Promise<void> {
  const inSession = drafts.filter(
    (d) => d.row.sessionId !== null && d.chunks.length > 0 && written.has(d.id),
  );
  await indexObservationContext(
    tx,
    ns,
    inSession.map((d) => d.id),
  );
}

/** `data.sessionId` when given, else the source stream (a conversation, a channel). */
function sessionIdOf(data: unknown, stream: string | null | undefined): string | null {
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const value = (data as Record<string, unknown>).sessionId;
    if (typeof value === 'string' && value !== '') return value.slice(0, 512);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return stream ? stream : null;
}

function sourcePathOf(provenance: unknown): string | null {
  if (provenance && typeof provenance === 'object' && !Array.isArray(provenance)) {
    const uri = (provenance as Record<string, unknown>).uri;
    if (typeof uri === 'string' && uri !== '') return uri.slice(0, 2048);
  }
  return null;
}

function compact(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null && v !== undefined));
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** "message · Bob Okafor · 2024-05-01 10:00 UTC": what happened, who did it, when. */
export function observationTitle(kind: string, actor: string | null, occurredAt: Date): string {
  const when = `${occurredAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return [kind, actor, when].filter(Boolean).join(' · ');
}

/**
 * The title this observation's own entity assertions give its actor, when that entity has no
 * scopes of its own (then it is no more restricted than the observation's chunks).
 */
function assertedTitle(input: ObservationInput, actor: { type: string; id: string }): string | null {
  for (const assertion of input.assertions ?? []) {
    const entity = (assertion as { entity?: { key?: unknown; title?: unknown; scopes?: unknown } } | null)
      ?.entity;
    const scoped = Array.isArray(entity?.scopes) && entity.scopes.length > 0;
    if (
      !scoped &&
      typeof entity?.title === 'string' &&
      entity.title.trim() !== '' &&
      (entity.key === actor.id || entity.key === `${actor.type}:${actor.id}`)
    ) {
      return entity.title.trim();
    }
  }
  return null;
}
