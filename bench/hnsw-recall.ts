/**
 * HNSW recall@k against exact search, on the loaded chunks, with the search queries' own
 * embeddings: the share of the true k nearest neighbours (sequential scan, exact cosine) that
 * the index returns at a given `hnsw.ef_search`. Both statements are timed: the index one is
 * the vector channel's floor.
 */
import type { Database } from '../src/db/database.js';
import type { Embedder } from '../src/providers/embedder.js';
import type { Dataset } from './generate.js';
import { type Latency, latency } from './stats.js';

export interface HnswRecall {
  k: number;
  efSearch: number;
  queries: number;
  recall: number;
  hnswMs: Latency;
  exactMs: Latency;
  indexUsed: boolean;
}

const KNN = `/* benchKnn */ SELECT chunk_id AS id FROM chunks
  WHERE namespace = $1 AND embedding IS NOT NULL ORDER BY embedding <=> $2::vector LIMIT $3`;

export async function measureHnswRecall(
  db: Database,
  ds: Dataset,
  embedder: Embedder,
  options: { queries: number; k: number[]; efSearch: number[] },
): Promise<HnswRecall[]> {
  const texts = Array.from({ length: options.queries }, (_, q) => ds.searchQuery(q));
  const vectors = (await embedder.embed(texts)).map((v) => `[${v.join(',')}]`);

  const maxK = Math.max(...options.k);
  const exact: number[][] = [];
  const exactMs: number[] = [];
  for (const v of vectors) {
    const { ids, ms } = await db.transaction('benchExactKnn', async (tx) => {
      await tx.query('SET LOCAL enable_indexscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      const t = performance.now();
      const { rows } = await tx.query<{ id: number }>(KNN, [ds.namespace, v, maxK]);
      return { ids: rows.map((r) => Number(r.id)), ms: performance.now() - t };
    });
    exact.push(ids);
    exactMs.push(ms);
  }

  const out: HnswRecall[] = [];
  for (const ef of options.efSearch) {
    const found: number[][] = [];
    const hnswMs: number[] = [];
    let indexUsed = false;
    for (let q = 0; q < vectors.length; q++) {
      const params = [ds.namespace, vectors[q], maxK];
      const { ids, ms, plan } = await db.transaction('benchHnswKnn', async (tx) => {
        await tx.query(`SET LOCAL hnsw.ef_search = ${Math.trunc(ef)}`);
        const explained =
          q === 0 ? (await tx.query<Record<string, string>>(`EXPLAIN ${KNN}`, params)).rows : [];
        const t = performance.now();
        const { rows } = await tx.query<{ id: number }>(KNN, params);
        return { ids: rows.map((r) => Number(r.id)), ms: performance.now() - t, plan: explained };
      });
      if (q === 0)
        indexUsed = plan.some((row) => /chunks_embedding_idx|hnsw/i.test(Object.values(row).join(' ')));
      found.push(ids);
      hnswMs.push(ms);
    }
    // The index returns its candidates in distance order, so top-k is the prefix of top-maxK.
    for (const k of options.k) {
      const recalls = found.map((ids, q) => {
        const truth = new Set(exact[q]!.slice(0, k));
        return truth.size ? ids.slice(0, k).filter((id) => truth.has(id)).length / truth.size : 1;
      });
      out.push({
        k,
        efSearch: ef,
        queries: vectors.length,
        recall: recalls.reduce((a, b) => a + b, 0) / Math.max(1, recalls.length),
        hnswMs: latency(hnswMs),
        exactMs: latency(exactMs),
        indexUsed,
      });
    }
  }
  return out;
}
