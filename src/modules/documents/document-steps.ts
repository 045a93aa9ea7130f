import type { Database } from '../../db/database.js';
import { appendChunks } from '../../kernel/store/chunk-store.js';
import type { ChunkWrite } from '../../kernel/store/chunk-store.js';
import { lockDocumentState, markDocumentComplete } from './store/document-store.js';

/**
 * Large documents are written in bounded transactions. Indexing a chunk (HNSW, two GIN
 * indexes, BM25 postings) costs ~10 ms on PGlite, so a 5 MiB document's ~7,000 chunks held the
 * one connection for over a minute and every other request waited. Instead the batch's main
 * transaction writes each document's entity row and content, and the chunks of the documents
 * of at most CHUNKS_PER_STEP chunks, up to MAIN_TRANSACTION_CHUNKS in all, in one statement;
 * the chunks of the larger documents (and of small ones past that budget) follow,
 * CHUNKS_PER_STEP per transaction, and other requests run between the steps.
 *
 * The budget is the trade: a full batch of small documents (500 of four sections) costs the
 * same few statements as ten of them, and holds PGlite's one connection while it is indexed
 * (seconds, not the minute a single 5 MiB document took).
 *
 * Atomicity, as the README states it: the entity, its content and its links commit
 * together; until the last step a large document answers `source` in full but search sees only
 * the chunks written so far. Its content hash is stored by the last step only, so a write that
 * stopped midway is never taken for UNCHANGED: sending the document again rewrites it.
 */
export const CHUNKS_PER_STEP = 25;
export const MAIN_TRANSACTION_CHUNKS = 2000;

export type StepOutcome = 'complete' | 'superseded';

/** Appends `chunks` step by step, then stores `contentHash`; stops when the document is gone or rewritten. */
export async function writeChunksInSteps(
  db: Database,
  namespace: string,
  key: string,
  chunks: ChunkWrite[],
  contentHash: string,
  visibleScopes: string[] | null,
): Promise<StepOutcome> {
  for (let start = 0; start < chunks.length; start += CHUNKS_PER_STEP) {
    const step = chunks.slice(start, start + CHUNKS_PER_STEP);
    // PGlite runs statements synchronously and resolves them as microtasks: without a turn of
    // the event loop here, no other request is even read off its socket until the last step.
    await yieldToEventLoop();
    const appended = await db.transaction('appendDocumentChunks', async (tx) => {
      // Purged or rewritten (hash set) since the main transaction: these chunks belong to nobody.
      const state = await lockDocumentState(tx, namespace, key, visibleScopes);
      if (!state || state.contentHash !== null) return false;
      await appendChunks(tx, namespace, key, step);
      return true;
    });
    if (!appended) return 'superseded';
  }
  await db.transaction('completeDocument', (tx) =>
    markDocumentComplete(tx, namespace, key, contentHash, visibleScopes),
  );
  return 'complete';
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Documents being written in steps, per database: a second write of one of them while the
 * first is under way would interleave its chunks, so it is refused until the first is done.
 */
const inFlight = new WeakMap<object, Set<string>>();

export function claimDocuments(db: object, keys: readonly string[]): { busy: Set<string>; release(): void } {
  let held = inFlight.get(db);
  if (!held) {
    held = new Set();
    inFlight.set(db, held);
  }
  const mine = new Set<string>();
  const busy = new Set<string>();
  for (const key of new Set(keys)) {
    if (held.has(key)) busy.add(key);
    else {
      held.add(key);
      mine.add(key);
    }
  }
  const set = held;
  return {
    busy,
    release: () => {
      for (const key of mine) set.delete(key);
    },
  };
}
