/**
 * One big write against everyone else: a real gateway over HTTP retains one large Markdown
 * document while a reader asks for an entity every 50 ms; reports the write's duration and
 * p50/p95/max of the reads made meanwhile (target: p95 ≤ 1 s with a 5 MiB document).
 *
 *   npx tsx bench/big-write.ts [--mib 5] [--embedder offline|hashing:64]
 *   scripts/with-native-postgres.sh npx tsx bench/big-write.ts --backend postgres
 *
 * The document generator and the measurement are exported for a test on a smaller document.
 */
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { createHttpServer } from '../src/http.js';
import { createLogger } from '../src/logger.js';
import { createEmbedder } from '../src/providers/create-embedder.js';
import { type BenchBackend, createThrowaway } from './database.js';
import { mulberry32 } from './rng.js';
import { latency, round } from './stats.js';

const WORDS =
  'river stone cloud market engine protocol ledger harbor signal lantern orbit meadow copper archive tunnel falcon garden quartz beacon canyon'.split(
    ' ',
  );

/** A Markdown document of about `bytes` bytes: a heading every eight paragraphs of 60–140 words. */
export function generateDocument(bytes: number, seed = 7): string {
  const rng = mulberry32(seed);
  const parts: string[] = [];
  let size = 0;
  for (let p = 0; size < bytes; p++) {
    const words = Array.from({ length: 60 + Math.floor(rng() * 80) }, () => {
      const word = WORDS[Math.floor(rng() * WORDS.length)]!;
      return rng() < 0.1 ? `${word}${Math.floor(rng() * 1000)}` : word;
    });
    const paragraph = `${p % 8 === 0 ? `## Section ${p / 8 + 1}\n\n` : ''}${words.join(' ')}.`;
    parts.push(paragraph);
    size += paragraph.length + 2;
  }
  return parts.join('\n\n').slice(0, bytes);
}

export interface BigWriteResult {
  bytes: number;
  writeMs: number;
  status: string;
  reads: ReturnType<typeof latency>;
}

async function post(url: string, query: string, variables: Record<string, unknown>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

/** Writes the document through `url` while reading entity `probe` every `intervalMs`. */
export async function measureBigWrite(
  url: string,
  namespace: string,
  content: string,
  intervalMs = 50,
): Promise<BigWriteResult> {
  await post(
    url,
    'mutation($ns: String!) { upsertEntities(namespace: $ns, entities: [{ key: "probe", kind: "thing", title: "Probe" }]) { accepted } }',
    { ns: namespace },
  );
  const samples: number[] = [];
  let writing = true;
  const reader = (async () => {
    while (writing) {
      const started = performance.now();
      const res = await post(url, 'query($ns: String!) { entity(namespace: $ns, key: "probe") { title } }', {
        ns: namespace,
      });
      if (res.errors || !res.data?.entity) throw new Error(`probe read failed: ${JSON.stringify(res)}`);
      samples.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  const started = performance.now();
  const written = await post(
    url,
    'mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { results { status code message } } }',
    { ns: namespace, d: [{ key: 'doc:big', title: 'Big document', content }] },
  );
  const writeMs = performance.now() - started;
  writing = false;
  await reader;
  const result = (written.data?.retainDocuments as { results: { status: string }[] } | undefined)?.results[0];
  return {
    bytes: Buffer.byteLength(content),
    writeMs,
    status: result?.status ?? JSON.stringify(written.errors),
    reads: latency(samples),
  };
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string, fallback: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
  };
  const mib = Number(arg('mib', '5'));
  const backend = arg('backend', process.env.DATABASE_URL ? 'postgres' : 'pglite') as BenchBackend;
  const embedderSpec = arg('embedder', 'offline');
  const config = parseConfig({
    MEMGATE_LOG_LEVEL: 'warn',
    MEMGATE_EMBEDDER: embedderSpec,
    MEMGATE_REQUEST_TIMEOUT_MS: process.env.MEMGATE_REQUEST_TIMEOUT_MS,
  });
  const embedder = await createEmbedder(embedderSpec, {
    dataDir: resolve('.test-cache', 'data'),
    openaiApiKey: undefined,
    openaiBaseUrl: undefined,
    log: () => {},
  });
  const throwaway = await createThrowaway(backend, {
    databaseUrl: process.env.DATABASE_URL,
    cacheDir: resolve('.test-cache'),
    embedding: { model: embedder.model, dimensions: embedder.dimensions },
  });
  let db: Database | undefined;
  try {
    db = await throwaway.open();
    const app = await createApp(config, { db, embedder, logger: createLogger('warn') });
    const server = createHttpServer({
      gateway: app.gateway,
      authenticate: app.authenticate,
      db,
      logger: app.deps.logger,
      maxBodyBytes: config.maxBodyBytes,
      requestTimeoutMs: config.requestTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const result = await measureBigWrite(
      url,
      'bench',
      generateDocument(Math.round(mib * 1024 * 1024) - 4096),
    );
    const r = result.reads;
    process.stdout.write(
      `${backend}, ${app.deps.embedder.model}: retainDocuments of ${(result.bytes / 1024 / 1024).toFixed(2)} MiB ` +
        `${result.status} in ${(result.writeMs / 1000).toFixed(1)} s; concurrent entity reads: n=${r.n} ` +
        `p50 ${round(r.p50)} ms, p95 ${round(r.p95)} ms, max ${round(r.max)} ms\n`,
    );
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
    await app.close();
    db = undefined;
  } finally {
    await db?.close();
    await throwaway.destroy();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main(process.argv.slice(2));
}
