/**
 * mem0's open-source TypeScript memory (mem0ai/oss) with its pgvector store, behind a bare
 * node:http server: POST /add {texts, userId} adds memories with `infer: false` (no LLM);
 * POST /search {query, userId, limit} is one memory.search. Embeddings come from the
 * benchmark's local OpenAI-compatible server (PEER_EMBEDDINGS_URL), so mem0 sees the same
 * vectors memgate stored. Telemetry is off (MEM0_TELEMETRY=false is set by the runner).
 * Prints `{"port": N}` on its first stdout line when it listens.
 */
import { createServer } from 'node:http';
import { registerHooks } from 'node:module';

// mem0 imports better-sqlite3 (a native addon) for its history store at load time. History is
// off here (`disableHistory: true`) and the addon is not installed, so the import resolves to
// a class that refuses to be constructed: if mem0 ever opened SQLite, the run would fail loudly.
const NO_SQLITE =
  "export default class NoSqlite { constructor() { throw new Error('SQLite history is disabled in this benchmark'); } }";
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'better-sqlite3') {
      return { url: `data:text/javascript,${encodeURIComponent(NO_SQLITE)}`, shortCircuit: true };
    }
    return next(specifier, context);
  },
});
const { Memory } = await import('mem0ai/oss');

const connectionString = process.env.DATABASE_URL;
const embeddingsUrl = process.env.PEER_EMBEDDINGS_URL;
const dims = Number(process.env.PEER_EMBEDDING_DIMS);
if (!connectionString || !embeddingsUrl || !dims) {
  throw new Error('DATABASE_URL, PEER_EMBEDDINGS_URL and PEER_EMBEDDING_DIMS are required');
}

const local = { apiKey: 'local', baseURL: embeddingsUrl, model: 'bench' };
const memory = new Memory({
  embedder: { provider: 'openai', config: { ...local, embeddingDims: dims } },
  vectorStore: {
    provider: 'pgvector',
    config: {
      connectionString,
      collectionName: 'mem0_memories',
      embeddingModelDims: dims,
      dimension: dims,
      hnsw: true,
    },
  },
  // Never called: every add is `infer: false`, and search does not use the LLM.
  llm: { provider: 'openai', config: local },
  disableHistory: true,
});

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function handle(path, input) {
  if (path === '/add') {
    let added = 0;
    for (const text of input.texts) {
      await memory.add(text, { userId: input.userId, infer: false });
      added++;
    }
    return { added };
  }
  if (path === '/search') {
    const found = await memory.search(input.query, {
      filters: { user_id: input.userId },
      topK: input.limit ?? 8,
    });
    return { results: (found.results ?? []).map((r) => ({ id: r.id, score: r.score, memory: r.memory })) };
  }
  throw new Error(`unknown path ${path}`);
}

const server = createServer((req, res) => {
  body(req)
    .then((input) => handle(req.url ?? '/', input))
    .then(
      (data) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data }));
      },
      (error) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ message: String(error?.message ?? error) }] }));
      },
    );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
