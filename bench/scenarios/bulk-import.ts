/**
 * The bulk import path end to end through the API: beginImport (which may drop the vector
 * index), batches of importObservations, finishImport (the index built once). The rate is
 * observations per second from the first request to an index that is ready; the dataset's
 * size in chunks is the number of observations (100k at L) into a namespace of their own.
 */
import { type GqlAnswer, gql } from '../http-load.js';
import { observationInput } from './ingest.js';
import type { IngestRun, IngestScenario, ScenarioContext } from './types.js';

export const BULK_NAMESPACE = 'bench-bulk';
const RESULT = 'accepted rejected results { status code message }';

const IMPORT = `mutation BenchBulkImport($ns: String!, $observations: [ObservationInput!]!) {
  importObservations(namespace: $ns, observations: $observations) { ${RESULT} }
}`;
const BEGIN = `mutation BenchBulkBegin($ns: String!, $n: Int!) {
  beginImport(namespace: $ns, observations: $n) { vectorIndex indexedChunks }
}`;
const FINISH = `mutation BenchBulkFinish($ns: String!) { finishImport(namespace: $ns) { vectorIndex ms } }`;

function dataOf<T>(answer: GqlAnswer, what: string): T {
  if (answer.status !== 200 || answer.errors?.length || !answer.data) {
    throw new Error(`${what}: ${JSON.stringify(answer.errors ?? answer.status)}`);
  }
  return Object.values(answer.data)[0] as T;
}

async function runBulk(ctx: ScenarioContext, requested: number): Promise<IngestRun> {
  const total = ctx.ds.size.chunks;
  // As large as a GraphQL list may be (MEMGATE_MAX_LIST_SIZE, 1000 by default).
  const batchSize = Math.max(requested, 1000);
  const started = performance.now();
  const plan = dataOf<{ vectorIndex: string; indexedChunks: number }>(
    await ctx.gql(BEGIN, { ns: BULK_NAMESPACE, n: total }),
    'beginImport',
  );
  ctx.log(
    `  bulk import of ${total}: vector index ${plan.vectorIndex} (${plan.indexedChunks} chunks indexed)`,
  );
  const batchMs: number[] = [];
  const statements: number[] = [];
  let rejected = 0;
  let firstRejection: string | undefined;
  for (let b = 0; b * batchSize < total; b++) {
    const size = Math.min(batchSize, total - b * batchSize);
    const observations = Array.from({ length: size }, (_, i) =>
      observationInput(ctx.ds, b, i, false, 'bulk-'),
    );
    const t = performance.now();
    const answer = await ctx.gql(IMPORT, { ns: BULK_NAMESPACE, observations });
    batchMs.push(performance.now() - t);
    const payload = dataOf<{
      rejected: number;
      results: { status: string; code?: string; message?: string }[];
    }>(answer, `importObservations batch ${b}`);
    rejected += payload.rejected;
    const bad = payload.results.find((r) => r.status === 'REJECTED');
    if (bad && !firstRejection) firstRejection = `${bad.code ?? ''} ${bad.message ?? ''}`.trim();
    if (answer.extensions?.sql) statements.push(answer.extensions.sql.statements);
  }
  const loadMs = performance.now() - started;
  const finish = dataOf<{ vectorIndex: string; ms: number }>(
    // The one index build over the whole table: minutes at L on a slow machine.
    await gql(ctx.gateway.url, FINISH, { ns: BULK_NAMESPACE }, 3_600_000),
    'finishImport',
  );
  const ms = performance.now() - started;
  return {
    items: total,
    ms,
    batchMs,
    statements,
    rejected,
    ...(firstRejection ? { firstRejection } : {}),
    phases: { loadMs, indexBuildMs: finish.ms },
  };
}

export const bulkImport: IngestScenario = {
  kind: 'ingest',
  name: 'bulkImport',
  title: 'bulk import (importObservations, 1000 a batch; vector index ready at the end)',
  unit: 'observations',
  document: IMPORT,
  batch: () => {
    throw new Error('bulkImport runs as a whole');
  },
  run: runBulk,
  async derived(ctx) {
    const rows = await ctx.gateway.query<{ n: number }>(
      `/* benchCountBulkChunks */ SELECT count(*)::int AS n FROM chunks WHERE namespace = $1`,
      [BULK_NAMESPACE],
    );
    return { unit: 'chunks', count: rows[0]?.n ?? 0 };
  },
};
