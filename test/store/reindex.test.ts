import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingText } from '../../src/domain/chunking.js';
import type { Embedder } from '../../src/providers/embedder.js';
import { createHashingEmbedder } from '../../src/providers/hashing-embedder.js';
import { migrateForReindex, reindex } from '../../src/modules/portability/reindex.js';
import { EmbeddingMismatchError, migrate, readEmbeddingSettings } from '../../src/kernel/store/migrate.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

describe('reindex: re-embedding every chunk after a model change', () => {
  let gw: TestGateway;
  const sections = (n: number) =>
    Array.from(
      { length: n },
      (_, i) => `## Part ${i}\n\nSection ${i} talks about topic ${i * 7} at length.`,
    ).join('\n\n');

  beforeAll(async () => {
    gw = await startTestGateway();
    const res = await gw.gql(
      `mutation($docs: [DocumentInput!]!) { retainDocuments(namespace: "a", documents: $docs) { accepted } }`,
      {
        docs: Array.from({ length: 6 }, (_, i) => ({
          key: `doc:${i}`,
          title: `Doc ${i}`,
          content: sections(5),
        })),
      },
    );
    expect(res.data).toEqual({ retainDocuments: { accepted: 6 } });
    await gw.gql(
      `mutation { retainDocuments(namespace: "b", documents: [{ key: "doc:x", title: "X", content: "Other namespace." }]) { accepted } }`,
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  const chunkState = () =>
    gw.db.query<{
      namespace: string;
      chunk_id: number;
      dims: number | null;
      title: string;
      heading: string;
      text: string;
    }>(
      `SELECT namespace, chunk_id, vector_dims(embedding) AS dims, title, heading, text FROM chunks ORDER BY namespace, chunk_id`,
    );

  it('a failure half-way leaves the database refusing to start until reindex is run again', async () => {
    let calls = 0;
    const flaky: Embedder = {
      model: 'hashing:32',
      dimensions: 32,
      embed: async (texts) => {
        calls++;
        if (calls === 2) throw new Error('provider down');
        return createHashingEmbedder(32).embed(texts);
      },
    };
    await expect(reindex(gw.db, flaky, { batchSize: 5 })).rejects.toThrow(/provider down/);
    const settings = await readEmbeddingSettings(gw.db);
    expect(settings).toEqual({ model: 'reindexing:hashing:32', dimensions: 32 });
    // The column was retyped (and emptied) before the first batch; the first batch is in.
    const dims = await gw.db.query<{ dims: number | null; n: number }>(
      `SELECT vector_dims(embedding) AS dims, count(*)::int AS n FROM chunks GROUP BY 1 ORDER BY 1`,
    );
    expect(dims.rows).toEqual([
      { dims: 32, n: 5 },
      { dims: null, n: dims.rows[1]?.n },
    ]);
    for (const wanted of [
      { model: 'hashing:64', dimensions: 64 },
      { model: 'hashing:32', dimensions: 32 },
    ]) {
      await expect(migrate(gw.db, wanted)).rejects.toBeInstanceOf(EmbeddingMismatchError);
    }
  });

  it('re-embeds every chunk of every namespace, resizing the column, and records the new model', async () => {
    const before = await chunkState();
    const postingsBefore = await gw.db.query(
      `SELECT count(*)::int AS n, sum(tf)::int AS tf FROM chunk_postings`,
    );
    const embedder = createHashingEmbedder(32);
    // The path the CLI takes: no embedding check when opening.
    await migrateForReindex(gw.db, embedder);
    const progress: [number, number][] = [];
    const result = await reindex(gw.db, embedder, {
      batchSize: 7,
      onProgress: (d, t) => progress.push([d, t]),
    });
    expect(result).toMatchObject({
      model: 'hashing:32',
      dimensions: 32,
      resized: false,
      chunks: before.rows.length,
    });
    expect(progress.at(-1)).toEqual([before.rows.length, before.rows.length]);
    expect(progress.length).toBeGreaterThan(3);

    const after = await chunkState();
    expect(after.rows.map((r) => r.chunk_id)).toEqual(before.rows.map((r) => r.chunk_id));
    expect(new Set(after.rows.map((r) => r.namespace))).toEqual(new Set(['a', 'b']));
    expect(after.rows.every((r) => r.dims === 32)).toBe(true);
    const typmod = await gw.db.query<{ type: string }>(
      `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'`,
    );
    expect(typmod.rows[0]!.type).toBe('vector(32)');
    const index = await gw.db.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'chunks_embedding_idx'`);
    expect(index.rows).toHaveLength(1);
    expect(await readEmbeddingSettings(gw.db)).toEqual({ model: 'hashing:32', dimensions: 32 });
    await expect(migrate(gw.db, { model: 'hashing:32', dimensions: 32 })).resolves.toEqual([]);
    await expect(migrate(gw.db, { model: 'hashing:64', dimensions: 64 })).rejects.toBeInstanceOf(
      EmbeddingMismatchError,
    );

    // The vectors are the new model's embedding of the text every write path embeds.
    const sample = after.rows[3]!;
    const [expected] = await embedder.embed([embeddingText(sample.title, sample.heading, sample.text)]);
    const stored = await gw.db.query<{ v: string }>(
      `SELECT embedding::text AS v FROM chunks WHERE namespace = $1 AND chunk_id = $2`,
      [sample.namespace, sample.chunk_id],
    );
    const got = JSON.parse(stored.rows[0]!.v) as number[];
    for (const [i, x] of got.entries()) expect(x).toBeCloseTo(expected![i]!, 5);

    // Lexical postings are untouched by re-embedding.
    expect(
      (await gw.db.query(`SELECT count(*)::int AS n, sum(tf)::int AS tf FROM chunk_postings`)).rows,
    ).toEqual(postingsBefore.rows);
    // Vector search works on the rebuilt index.
    const nearest = await gw.db.query<{ chunk_id: number }>(
      `SELECT chunk_id FROM chunks ORDER BY embedding <=> $1::vector LIMIT 1`,
      [`[${expected!.join(',')}]`],
    );
    expect(nearest.rows[0]!.chunk_id).toBe(sample.chunk_id);
  });
});
