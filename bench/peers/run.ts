/**
 * `npm run bench:peers`: memgate beside its peers on one native PostgreSQL database.
 *
 *   scripts/with-native-postgres.sh npm run bench:peers [-- --size S|L] [--rounds N] [--quick]
 *     [--memgate-node peer|PATH]
 *
 * Loads the benchmark's dataset once, then runs in interleaved rounds, at 1 and 32 clients:
 * the four read shapes of shapes.ts against memgate over HTTP, PostGraphile 5 over the same
 * tables, and the floor (memgate's own statements replayed from a bare HTTP server); and
 * hybrid search against memgate and mem0's OSS memory with its pgvector store. Writes
 * peers-<size>.json and .md under bench/results (or --out). `--memgate-node peer` runs memgate
 * on the same Node binary as PostGraphile and mem0 (default: the Node running the bench).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'graphql';
import pg from 'pg';
import { createEmbedder } from '../../src/providers/create-embedder.js';
import { loadWordVectors } from '../../src/providers/embedding-cache.js';
import { createThrowaway } from '../database.js';
import { Dataset, SIZES, type SizeName } from '../generate.js';
import { type GatewayProcess, startGateway } from '../gateway-process.js';
import { closeSharedAgent, describeError, gql, runLoad } from '../http-load.js';
import { loadDataset } from '../load.js';
import { documentDepth } from '../runner.js';
import { TextModel } from '../text-model.js';
import { type EmbeddingServer, startEmbeddingServer } from './embedding-server.js';
import type { FloorPlan } from './floor-server.js';
import { type Rounds, type System, addSample, sampleOf } from './measure.js';
import {
  ensurePeersInstalled,
  PEERS_DIR,
  PEER_NODE,
  type PeerProcess,
  startPeer,
  tsxArgs,
} from './processes.js';
import { type PeerReport, buildReport, renderPeersMarkdown } from './report.js';
import { SEARCH_DOCUMENT, SHAPES, type Shape, searchVariables } from './shapes.js';

export interface PeerOptions {
  size: SizeName;
  rounds: number;
  quick: boolean;
  seed: number;
  out: string;
  clients: [number, number];
  /** The Node binary memgate runs on. */
  memgateNode: string;
}

type Log = (msg: string) => void;
const root = join(PEERS_DIR, '..', '..');

export function parsePeerArgs(argv: string[]): PeerOptions {
  const o: PeerOptions = {
    size: 'S',
    rounds: 5,
    quick: false,
    seed: 42,
    out: join(root, 'bench', 'results'),
    clients: [1, 32],
    memgateNode: process.execPath,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--size') {
      const v = value().toUpperCase();
      if (v !== 'S' && v !== 'L') throw new Error(`--size must be S or L, got ${v}`);
      o.size = v;
    } else if (arg === '--rounds') o.rounds = Math.max(1, Number.parseInt(value(), 10) || 1);
    else if (arg === '--seed') o.seed = Number.parseInt(value(), 10) || 42;
    else if (arg === '--out') o.out = value();
    else if (arg === '--quick') o.quick = true;
    else if (arg === '--memgate-node') {
      const v = value();
      o.memgateNode = v === 'peer' ? PEER_NODE : v;
    } else throw new Error(`unknown option ${arg}`);
  }
  if (o.quick) {
    o.size = 'quick';
    o.rounds = 1;
    o.clients = [1, 4];
  }
  return o;
}

/** Request counts per measured run: one client, many clients, mem0's slow search. */
function counts(o: PeerOptions) {
  return o.quick
    ? { one: 5, many: 16, mem0: 2, distinct: 4, warmup: 2 }
    : { one: 60, many: 320, mem0: 8, distinct: 32, warmup: 10 };
}

interface Systems {
  memgate: GatewayProcess;
  postgraphile: PeerProcess;
  floor: PeerProcess;
  mem0: PeerProcess;
  embeddings: EmbeddingServer;
  cursors: { memgate: (string | null)[]; postgraphile: (string | null)[] };
}

export async function runPeers(o: PeerOptions, log: Log): Promise<PeerReport> {
  const started = performance.now();
  const loadAvgStart = loadavg();
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl)
    throw new Error(
      'bench:peers needs native PostgreSQL: scripts/with-native-postgres.sh npm run bench:peers',
    );
  ensurePeersInstalled(log);
  const cacheDir = process.env.MEMGATE_BENCH_CACHE_DIR ?? join(root, '.test-cache');
  const embedder = await createEmbedder('offline', { dataDir: cacheDir, log });
  const words = await loadWordVectors({ dataDir: cacheDir });
  const ds = new Dataset(SIZES[o.size], o.seed, new TextModel(words.words, o.seed));
  const throwaway = await createThrowaway('postgres', {
    databaseUrl,
    cacheDir,
    embedding: { model: embedder.model, dimensions: embedder.dimensions },
  });
  const location = throwaway.location;
  if (location.backend !== 'postgres') throw new Error('unreachable');
  const stoppers: (() => Promise<void>)[] = [];
  try {
    const { db } = await throwaway.openMigrated();
    try {
      const load = await loadDataset(db, ds, embedder, log);
      log(`dataset ${o.size} loaded in ${(load.totalMs / 1000).toFixed(1)} s`);
    } finally {
      await db.close();
    }
    const systems = await startSystems(o, ds, location.url, embedder, cacheDir, stoppers, log);
    const rounds: Rounds = {};
    for (let r = 0; r < o.rounds; r++) {
      log(`round ${r + 1}/${o.rounds} (load ${loadavg()[0]!.toFixed(2)})`);
      await runRound(o, ds, systems, rounds, r, log);
    }
    return buildReport({
      options: o,
      rounds,
      durationMs: performance.now() - started,
      loadAvgStart,
      loadAvgEnd: loadavg(),
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      node: process.version,
      memgateNode: execFileSync(o.memgateNode, ['--version'], { encoding: 'utf8' }).trim(),
      dataset: { entities: ds.entities, facts: SIZES[o.size].facts, chunks: SIZES[o.size].chunks },
    });
  } finally {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    closeSharedAgent();
    await throwaway.destroy().catch((e: unknown) => log(`could not drop the database: ${String(e)}`));
  }
}

async function startSystems(
  o: PeerOptions,
  ds: Dataset,
  url: string,
  embedder: Awaited<ReturnType<typeof createEmbedder>>,
  cacheDir: string,
  stoppers: (() => Promise<void>)[],
  log: Log,
): Promise<Systems> {
  const n = counts(o);
  const depth = Math.max(...SHAPES.map((s) => documentDepth(parse(s.memgate))));
  const location = { backend: 'postgres' as const, url, name: new URL(url).pathname.slice(1) };
  const memgate = await startGateway(
    location,
    cacheDir,
    { MEMGATE_MAX_DEPTH: String(depth) },
    {},
    o.memgateNode,
  );
  stoppers.push(() => memgate.stop());
  log(`memgate on ${memgate.url}`);
  const postgraphile = await startPeer(
    'postgraphile',
    PEER_NODE,
    [join(PEERS_DIR, 'postgraphile-server.mjs')],
    { DATABASE_URL: url },
    '/graphql',
  );
  stoppers.push(() => postgraphile.stop());
  log(`PostGraphile on ${postgraphile.url}`);
  const cursors = {
    memgate: await collectCursors(memgate.url, SHAPES[1]!, ds, n.distinct, ['entities']),
    postgraphile: await collectCursors(
      postgraphile.url,
      { ...SHAPES[1]!, memgate: SHAPES[1]!.postgraphile },
      ds,
      n.distinct,
      ['allEntities'],
    ),
  };
  const planFile = join(tmpdir(), `memgate-peers-floor-${process.pid}.json`);
  writeFileSync(planFile, JSON.stringify(await captureFloorPlan(memgate, ds, cursors.memgate, n.distinct)));
  const floor = await startPeer(
    'floor',
    process.execPath,
    tsxArgs(join(PEERS_DIR, 'floor-server.ts')),
    { DATABASE_URL: url, PEER_STATEMENTS: planFile },
    '/floor',
  );
  stoppers.push(() => floor.stop());
  const known = await storedVectors(url, ds.namespace);
  const embeddings = await startEmbeddingServer(embedder, known);
  stoppers.push(() => embeddings.close());
  const mem0 = await startPeer(
    'mem0',
    PEER_NODE,
    [join(PEERS_DIR, 'mem0-server.mjs')],
    {
      DATABASE_URL: url,
      PEER_EMBEDDINGS_URL: embeddings.url,
      PEER_EMBEDDING_DIMS: String(embedder.dimensions),
      MEM0_TELEMETRY: 'false',
    },
    '',
  );
  stoppers.push(() => mem0.stop());
  await feedMem0(mem0.url, [...known.keys()], log);
  return { memgate, postgraphile, floor, mem0, embeddings, cursors };
}

/** The cursors of pages 1…n-1 (page 0 has none), walking the connection from its start. */
async function collectCursors(
  url: string,
  shape: Shape,
  ds: Dataset,
  n: number,
  path: string[],
): Promise<(string | null)[]> {
  const cursors: (string | null)[] = [null];
  while (cursors.length < n) {
    const answer = await gql(url, shape.memgate, shape.variables(ds, 0, cursors[cursors.length - 1]!));
    if (answer.errors?.length || !answer.data) throw new Error(`paging ${url}: ${describeError(answer)}`);
    const conn = answer.data[path[0]!] as { pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    if (!conn.pageInfo.hasNextPage || !conn.pageInfo.endCursor) break;
    cursors.push(conn.pageInfo.endCursor);
  }
  return cursors;
}

/** The statements memgate runs for request i of each shape, captured from the gateway itself. */
async function captureFloorPlan(
  memgate: GatewayProcess,
  ds: Dataset,
  cursors: (string | null)[],
  n: number,
): Promise<FloorPlan> {
  const plan: FloorPlan = {};
  for (const shape of SHAPES) {
    plan[shape.name] = [];
    for (let i = 0; i < n; i++) {
      await memgate.captureStart();
      const answer = await gql(
        memgate.url,
        shape.memgate,
        shape.variables(ds, i, cursors[i % cursors.length] ?? null),
      );
      await memgate.captureStop();
      if (answer.errors?.length) throw new Error(`memgate ${shape.name}: ${describeError(answer)}`);
      plan[shape.name]!.push(await memgate.capturedStatements());
    }
  }
  return plan;
}

/** Every chunk text of the namespace with the vector memgate stored for it. */
async function storedVectors(url: string, namespace: string): Promise<Map<string, number[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ text: string; v: string }>(
      'SELECT text, embedding::text AS v FROM chunks WHERE namespace = $1 AND embedding IS NOT NULL',
      [namespace],
    );
    return new Map(rows.map((r) => [r.text, JSON.parse(r.v) as number[]]));
  } finally {
    await client.end();
  }
}

/** Adds every chunk text to mem0 (infer: false), four batches in flight. */
async function feedMem0(url: string, texts: string[], log: Log): Promise<void> {
  const t0 = performance.now();
  const batch = 250;
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += batch) batches.push(texts.slice(i, i + batch));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const texts = batches[next++]!;
      const res = await fetch(`${url}/add`, {
        method: 'POST',
        body: JSON.stringify({ texts, userId: 'bench' }),
      });
      const body = (await res.json()) as { errors?: { message: string }[] };
      if (body.errors?.length) throw new Error(`mem0 add: ${body.errors[0]!.message}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  log(`mem0: ${texts.length} memories added in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function runRound(
  o: PeerOptions,
  ds: Dataset,
  s: Systems,
  rounds: Rounds,
  r: number,
  log: Log,
): Promise<void> {
  const n = counts(o);
  const [one, many] = o.clients;
  const order: Exclude<System, 'mem0'>[] = ['memgate', 'postgraphile', 'floor'];
  const rotated = order.map((_, k) => order[(k + r) % order.length]!);
  for (const shape of SHAPES) {
    for (const c of [one, many]) {
      for (const system of rotated) {
        const requests = c === one ? n.one : n.many;
        const body = (i: number) => {
          const k = r * 7919 + i;
          const cursor = (list: (string | null)[]) => list[k % list.length] ?? null;
          if (system === 'floor') return JSON.stringify({ shape: shape.name, i: k });
          const doc = system === 'memgate' ? shape.memgate : shape.postgraphile;
          return JSON.stringify({ query: doc, variables: shape.variables(ds, k, cursor(s.cursors[system])) });
        };
        const url =
          system === 'memgate' ? s.memgate.url : system === 'postgraphile' ? s.postgraphile.url : s.floor.url;
        await runLoad({
          url,
          concurrency: 1,
          requests: n.warmup,
          maxMs: 30_000,
          body: (i) => body(100_000 + i),
        });
        const res = await runLoad({ url, concurrency: c, requests, maxMs: 120_000, body });
        if (res.errors)
          log(`  ${shape.name} ${system} c${c}: ${res.errors} errors, e.g. ${res.errorSamples[0]}`);
        addSample(
          rounds,
          shape.name,
          c,
          system,
          sampleOf(res.latencies, res.wallMs, res.errors, res.statements),
        );
      }
    }
  }
  const searchBody = (i: number) =>
    JSON.stringify({ query: SEARCH_DOCUMENT, variables: searchVariables(ds, r * 7919 + i) });
  const mem0Body = (i: number) =>
    JSON.stringify({ query: ds.searchQuery((r * 7919 + i) % 256), userId: 'bench', limit: 8 });
  for (const c of [one, many]) {
    await runLoad({
      url: s.memgate.url,
      concurrency: 1,
      requests: n.warmup,
      maxMs: 30_000,
      body: (i) => searchBody(100_000 + i),
    });
    const res = await runLoad({
      url: s.memgate.url,
      concurrency: c,
      requests: c === one ? n.one : n.many,
      maxMs: 120_000,
      body: searchBody,
    });
    addSample(
      rounds,
      'search',
      c,
      'memgate',
      sampleOf(res.latencies, res.wallMs, res.errors, res.statements),
    );
  }
  await runLoad({
    url: `${s.mem0.url}/search`,
    concurrency: 1,
    requests: 1,
    maxMs: 60_000,
    body: (i) => mem0Body(100_000 + i),
  });
  const res = await runLoad({
    url: `${s.mem0.url}/search`,
    concurrency: 1,
    requests: n.mem0,
    maxMs: 120_000,
    body: mem0Body,
  });
  if (res.errors) log(`  search mem0: ${res.errors} errors, e.g. ${res.errorSamples[0]}`);
  addSample(rounds, 'search', one, 'mem0', sampleOf(res.latencies, res.wallMs, res.errors, []));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const t0 = performance.now();
  const log: Log = (msg) =>
    process.stderr.write(`[peers ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
  try {
    const o = parsePeerArgs(process.argv.slice(2));
    const report = await runPeers(o, log);
    const md = renderPeersMarkdown(report);
    const name = `peers-${o.quick ? 'quick' : o.size}`;
    mkdirSync(o.out, { recursive: true });
    writeFileSync(join(o.out, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(o.out, `${name}.md`), md);
    process.stdout.write(`\n${md}`);
    log(`wrote ${join(o.out, `${name}.json`)} and .md`);
  } catch (error) {
    process.stderr.write(
      `bench:peers failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
