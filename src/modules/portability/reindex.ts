import type { Database } from '../../db/database.js';
import { embeddingText } from '../../domain/chunking.js';
import type { Embedder } from '../../providers/embedder.js';
import {
  type ChunkCursor,
  type ChunkForEmbedding,
  chunkEmbeddingDimension,
  countAllChunks,
  createChunkEmbeddingIndex,
  dropChunkEmbeddingIndex,
  listChunksForEmbedding,
  otherVectorColumns,
  resizeChunkEmbeddings,
  updateChunkEmbeddings,
  writeEmbeddingSettings,
} from '../../kernel/store/chunk-store.js';
import { type EmbeddingSettings, migrate, readEmbeddingSettings } from '../../kernel/store/migrate.js';
import { reindexContext } from '../observations/index.js';

/**
 * Re-embeds every chunk with `embedder` (after a model change, or to fill vectors an embedder
 * outage left empty). Maintenance over all namespaces; stop the gateway while it runs.
 *
 * 1. The settings row is set to `reindexing:<model>` first, so a gateway started half-way
 *    fails the embedding check (whatever model it is configured with) and says to re-run.
 * 2. The HNSW index is dropped (one build at the end is far cheaper than per-row inserts);
 *    when the dimension changes the column is retyped and emptied (`USING NULL`).
 * 3. Chunks are embedded in batches as `embeddingText(title, heading, text)` — the text every
 *    write path embeds — and written back; no indexed text changes, so no posting does.
 * 4. The index is rebuilt and the settings row records the new model and dimension.
 * 5. The contextual index (turns indexed with their neighbours, the namespaces' windows) is
 *    rebuilt too, so data written before it existed gains it.
 * Re-running after a crash starts over and ends in the same state.
 */

export interface ReindexOptions {
  batchSize?: number;
  onProgress?: (done: number, total: number) => void;
  log?: (message: string) => void;
}

export interface ReindexResult {
  previous: EmbeddingSettings | null;
  model: string;
  dimensions: number;
  resized: boolean;
  chunks: number;
  /** Chunks whose contextual search text changed. */
  contextChunks: number;
  ms: number;
}

export const REINDEX_MARKER = 'reindexing:';

export async function reindex(
  db: Database,
  embedder: Embedder,
  options: ReindexOptions = {},
): Promise<ReindexResult> {
  const started = performance.now();
  const batchSize = options.batchSize ?? 256;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError('batchSize must be a positive integer');
  const log = options.log ?? (() => undefined);
  const previous = await readEmbeddingSettings(db);
  const others = await otherVectorColumns(db);
  if (others.length > 0) {
    log(
      `note: only chunks.embedding is rebuilt; other vector columns are left as they are: ${others.join(', ')}`,
    );
  }
  const currentDim = await chunkEmbeddingDimension(db);
  const resized = currentDim !== embedder.dimensions;
  await db.transaction('reindexPrepare', async (tx) => {
    await writeEmbeddingSettings(tx, `${REINDEX_MARKER}${embedder.model}`, embedder.dimensions);
    await dropChunkEmbeddingIndex(tx);
    if (resized) await resizeChunkEmbeddings(tx, embedder.dimensions);
  });
  if (resized) log(`chunks.embedding: vector(${currentDim ?? '?'}) → vector(${embedder.dimensions})`);

  const total = await countAllChunks(db);
  let done = 0;
  options.onProgress?.(0, total);
  let cursor: ChunkCursor | null = null;
  // One write in flight while the next batch is embedded: the embedder (CPU or network) and
  // the database overlap.
  let pending: Promise<void> = Promise.resolve();
  try {
    for (;;) {
      const batch: ChunkForEmbedding[] = await listChunksForEmbedding(db, cursor, batchSize);
      if (batch.length === 0) break;
      const last = batch[batch.length - 1]!;
      cursor = { namespace: last.namespace, chunkId: last.chunkId };
      const vectors = await embedder.embed(batch.map((c) => embeddingText(c.title ?? '', c.heading, c.text)));
      if (vectors.length !== batch.length || vectors.some((v) => v.length !== embedder.dimensions)) {
        throw new Error(
          `embedder ${embedder.model} returned ${vectors.length} vectors for ${batch.length} texts ` +
            `(or a dimension other than ${embedder.dimensions})`,
        );
      }
      await pending;
      pending = updateChunkEmbeddings(
        db,
        batch.map((c, i) => ({ namespace: c.namespace, chunkId: c.chunkId, embedding: vectors[i]! })),
      ).then(() => {
        done += batch.length;
        options.onProgress?.(done, Math.max(total, done));
      });
    }
  } catch (error) {
    // A failed batch must not leave the previous batch's write in flight behind the caller.
    await pending.catch(() => undefined);
    throw error;
  }
  await pending;

  log('building the vector index');
  await createChunkEmbeddingIndex(db);
  await writeEmbeddingSettings(db, embedder.model, embedder.dimensions);
  const context = await reindexContext(db, null, log);
  return {
    previous,
    model: embedder.model,
    dimensions: embedder.dimensions,
    resized,
    chunks: done,
    contextChunks: context.chunks,
    ms: performance.now() - started,
  };
}

/**
 * Brings a database up to date for re-indexing without the embedding check that start-up
 * does: migrations run with the dimension the tables were built with, whatever the configured
 * embedder is. A fresh database is simply created for `embedder`.
 */
export async function migrateForReindex(db: Database, embedder: Embedder): Promise<EmbeddingSettings | null> {
  const stored = await readEmbeddingSettings(db);
  await migrate(db, stored ?? { model: embedder.model, dimensions: embedder.dimensions });
  return stored;
}
