import { assertCanWrite } from '../../auth/principal.js';
import { forbidden, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import {
  allowLongImportStatements,
  closeBulkImport,
  countEmbeddedChunks,
  dropVectorIndex,
  ensureVectorIndex,
  insertObservationsBulk,
  openBulkImport,
  openBulkImportFrom,
  refreshStaleStatistics,
  type TurnKey,
  turnsArrivedSince,
  vectorIndexState,
} from './store/bulk-store.js';
import { findContextWindow, indexObservationContext } from '../../kernel/store/context-index-store.js';
import { findEntitiesByKeys } from '../../kernel/store/entity-store.js';
import { findRecordedObservations } from '../../kernel/store/observation-store.js';
import { type WritePayload, type WriteResult, rejected, toPayload } from '../../kernel/batch.js';
import { describe } from '../facts/index.js';
import {
  type Draft,
  ObservationService,
  type ObservationInput,
  collision,
  deriveObservationIndex,
  draftOf,
  duplicateOf,
  observationInputSchema,
  screenObservation,
  withBatchContext,
} from '../observations/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { chunkLanguageFor } from '../text-search/index.js';
import { namespaceSchema } from '../../kernel/validation.js';

/** A bulk batch: larger than an online one, one COPY per table and one moving statement. */
export const MAX_BULK_BATCH = 5000;
/** Turns re-indexed in context per statement when an import finishes. */
export const FINISH_REINDEX_PAGE = 5000;
/** Below this many new chunks, inserting into the live vector index beats rebuilding it. */
export const REBUILD_MIN_ROWS = 20_000;
/** …and the load must add at least this share of what the index already holds. */
export const REBUILD_MIN_SHARE = 0.25;

export type VectorIndexPlan = 'KEEP' | 'REBUILD';

export interface ImportPlan {
  vectorIndex: VectorIndexPlan;
  /** Chunks the index held when the import began (all namespaces; an estimate). */
  indexedChunks: number;
}

export interface ImportFinish {
  /** BUILT: the index was (re)built now; READY: it was already there. */
  vectorIndex: 'BUILT' | 'READY';
  ms: number;
}

/**
 * Bulk import of observations (`memgate import --bulk` and the `importObservations`
 * mutation): the same validation, identities, visibility rules and per-item answers as
 * recordObservations, written set-based (COPY into staging, one statement into the tables).
 * Observations with assertions take the online path item by item, so the projection rules
 * stay in one place. `beginImport` may drop the vector index for a large load and
 * `finishImport` builds it once; a crash in between leaves every batch whole or absent and a
 * re-run (or `finishImport` alone) completes the index.
 */
export class BulkImportService {
  constructor(private readonly scope: RequestScope) {}

  /**
   * `force` overrides the size rule (measurements, operators who know better). The vector index
   * serves every namespace, so only an admin may drop it: for anyone else the plan is KEEP, and
   * asking for REBUILD is FORBIDDEN.
   */
  async beginImport(
    namespace: string,
    expectedObservations: number,
    force?: VectorIndexPlan | null,
  ): Promise<ImportPlan> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const { principal } = this.scope;
    assertCanWrite(principal, ns);
    if (force === 'REBUILD' && !principal.admin) {
      throw forbidden('Only an admin may rebuild the vector index: it serves every namespace.');
    }
    const indexed = await countEmbeddedChunks(this.scope.db);
    const rebuild = force
      ? force === 'REBUILD'
      : principal.admin &&
        expectedObservations >= REBUILD_MIN_ROWS &&
        expectedObservations >= indexed * REBUILD_MIN_SHARE;
    await openBulkImport(this.scope.db, ns);
    if (rebuild) await dropVectorIndex(this.scope.db);
    return { vectorIndex: rebuild ? 'REBUILD' : 'KEEP', indexedChunks: indexed };
  }

  /**
   * Ends the namespace's import: the turns that arrived during it are re-indexed in context
   * once (the batches left their older neighbours as they were), then the vector index is
   * built if the import dropped it. Safe to repeat: a finish that did not complete leaves the
   * import open.
   */
  async finishImport(namespace: string): Promise<ImportFinish> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    const started = performance.now();
    const from = await openBulkImportFrom(this.scope.db, ns);
    if (from !== null) {
      await this.reindexArrivedTurns(ns, from);
      await closeBulkImport(this.scope.db, ns, from);
    }
    const built = await ensureVectorIndex(this.scope.db);
    return { vectorIndex: built ? 'BUILT' : 'READY', ms: performance.now() - started };
  }

  /** Each page of arrived turns and their neighbourhoods, in a transaction of its own. */
  private async reindexArrivedTurns(ns: string, from: bigint): Promise<void> {
    let after: TurnKey | null = null;
    for (;;) {
      const page = await turnsArrivedSince(this.scope.db, ns, from, after, FINISH_REINDEX_PAGE);
      if (page.length === 0) return;
      await this.scope.db.transaction('finishImportContext', async (tx) => {
        await allowLongImportStatements(tx);
        await indexObservationContext(
          tx,
          ns,
          page.map((t) => t.id),
        );
      });
      after = page[page.length - 1]!;
    }
  }

  async vectorIndexReady(): Promise<boolean> {
    return (await vectorIndexState(this.scope.db)) === 'VALID';
  }

  async importObservations(namespace: string, inputs: unknown[]): Promise<WritePayload> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    if (inputs.length > MAX_BULK_BATCH) {
      return toPayload(
        inputs.map((_, i) =>
          rejected(i, 'LIMIT_EXCEEDED', `A bulk batch holds at most ${MAX_BULK_BATCH} items.`),
        ),
      );
    }
    const results: WriteResult[] = [];
    const plain: { index: number; id: string; input: ObservationInput }[] = [];
    const projected: { index: number; value: unknown }[] = [];
    const firstIndexOf = new Map<string, number>();
    inputs.forEach((raw, index) => {
      const parsed = observationInputSchema.safeParse(raw);
      if (!parsed.success) {
        results.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error)));
        return;
      }
      const input = parsed.data;
      if ((input.assertions?.length ?? 0) > 0) {
        projected.push({ index, value: raw });
        return;
      }
      const screened = screenObservation(ns, index, input, firstIndexOf, this.scope.principal);
      if ('result' in screened) results.push(screened.result);
      else plain.push({ index, id: screened.id, input });
    });
    results.push(...(await this.writePlain(ns, plain)));
    results.push(...(await this.writeProjected(ns, projected)));
    // Subscribers hear of the new rows from the database's own change triggers.
    return toPayload(results);
  }

  private async writePlain(
    ns: string,
    candidates: { index: number; id: string; input: ObservationInput }[],
  ): Promise<WriteResult[]> {
    if (candidates.length === 0) return [];
    const scopes = this.scope.principal.scopes;
    const known = await findRecordedObservations(
      this.scope.db,
      ns,
      candidates.map((c) => c.id),
      scopes,
    );
    const results: WriteResult[] = [];
    const fresh = candidates.filter((c) => {
      if (known.visible.has(c.id)) results.push(duplicateOf(ns, c.index, c.id, null));
      else if (known.hidden.has(c.id)) results.push(collision(c.index));
      else return true;
      return false;
    });
    if (fresh.length === 0) return results;
    const now = new Date();
    const names = await this.actorNames(ns, fresh);
    const language = await chunkLanguageFor(this.scope, ns);
    const drafts = fresh.map((c) =>
      draftOf(c.index, c.id, c.input, now, names, language, this.scope.principal),
    );
    await this.embed(drafts);
    // Indexed as the online path indexes: turns with their neighbours, linked to their entities
    // (both bounded by the batch: only the new turns' neighbourhoods are re-read).
    await withBatchContext(drafts, await findContextWindow(this.scope.db, ns));
    const inserted = await this.scope.db.transaction('importObservations', async (tx) => {
      await allowLongImportStatements(tx);
      // Within an open import, older turns are re-indexed once, by finishImport.
      const open = (await openBulkImportFrom(tx, ns)) !== null;
      const ids = await insertObservationsBulk(
        tx,
        ns,
        drafts.map((d) => ({ row: d.row, node: d.node, chunks: d.chunks })),
      );
      await deriveObservationIndex(tx, ns, drafts, ids, open ? 'later' : 'now');
      return ids;
    });
    // The next batch's statements are planned with statistics that know this one's rows. The
    // batch has committed: a failure here costs speed, never its answers.
    await refreshStaleStatistics(this.scope.db, ns).catch((error: unknown) =>
      this.scope.deps.logger.warn('refreshing planner statistics failed', { error: String(error) }),
    );
    const raced = drafts.filter((d) => !inserted.has(d.id));
    const after = await findRecordedObservations(
      this.scope.db,
      ns,
      raced.map((d) => d.id),
      scopes,
    );
    for (const d of drafts) {
      if (inserted.has(d.id)) {
        results.push({
          index: d.index,
          status: 'CREATED',
          id: globalId('Observation', ns, d.id),
          key: d.id,
          message: d.warning,
        });
      } else if (after.visible.has(d.id)) results.push(duplicateOf(ns, d.index, d.id, null));
      else results.push(collision(d.index));
    }
    return results;
  }

  /** Items with assertions: the online write, its answers mapped back to this batch's indexes. */
  private async writeProjected(
    ns: string,
    items: { index: number; value: unknown }[],
  ): Promise<WriteResult[]> {
    if (items.length === 0) return [];
    const payload = await new ObservationService(this.scope).recordObservations(
      ns,
      items.map((i) => i.value),
    );
    return payload.results.map((r) => ({ ...r, index: items[r.index]!.index }));
  }

  /** One embedder call for the batch; on failure the chunks go in without vectors, as online. */
  private async embed(drafts: Draft[]): Promise<void> {
    const chunks = drafts.flatMap((d) => d.chunks);
    if (chunks.length === 0) return;
    try {
      const vectors = await this.scope.deps.embedder.embed(chunks.map((c) => c.text));
      if (vectors.length !== chunks.length)
        throw new Error(`embedder returned ${vectors.length} vectors for ${chunks.length} texts`);
      chunks.forEach((c, i) => {
        c.embedding = vectors[i]!;
      });
    } catch (error) {
      this.scope.deps.logger.warn('embedding failed; observations indexed without vectors', {
        error: String(error),
      });
      for (const d of drafts) {
        if (d.chunks.length > 0) {
          d.warning = 'indexed without an embedding (the embedder failed); run `memgate reindex` to add it';
        }
      }
    }
  }

  /** Titles of the actors' entities everyone may see, as the online path uses them. */
  private async actorNames(ns: string, items: { input: ObservationInput }[]): Promise<Map<string, string>> {
    const keys = new Set<string>();
    for (const { input } of items) {
      if (!input.actor) continue;
      keys.add(input.actor.id);
      keys.add(`${input.actor.type}:${input.actor.id}`);
    }
    const names = new Map<string, string>();
    if (keys.size === 0) return names;
    for (const row of await findEntitiesByKeys(this.scope.db, ns, [...keys], [])) {
      if (row?.title) names.set(row.key, row.title);
    }
    return names;
  }
}
