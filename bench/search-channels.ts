/**
 * Search latency and where it goes, per channel: `npx tsx bench/search-channels.ts [--size S|L]
 * [--backend pglite|postgres] [--queries N] [--out DIR]`. Loads the seeded benchmark dataset
 * (S = 10k chunks, L = 100k) into a throwaway database, then runs `SearchService.search`
 * (the code path of the GraphQL field, without HTTP) one query at a time and reports p50/p95
 * of the whole search and of each channel, and each channel's share of the summed channel
 * time. `--pglite-dir DIR` reuses a PGlite directory that already holds the dataset of that
 * size (loading 100k chunks takes minutes) instead of a throwaway database. On PGlite statements run one at a time, so a channel's time includes waiting for
 * the others; on PostgreSQL they overlap.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { LOCAL_PRINCIPAL } from '../src/auth/principal.js';
import { parseConfig } from '../src/config.js';
import { type Database, countingDatabase } from '../src/db/database.js';
import { openPglite } from '../src/db/pglite-database.js';
import { createLoaders } from '../src/kernel/loaders.js';
import { createLogger } from '../src/logger.js';
import { createEmbedder } from '../src/providers/create-embedder.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import type { SearchMode } from '../src/modules/retrieval/pipeline/search.js';
import { SearchService } from '../src/modules/retrieval/search-service.js';
import { type BenchBackend, createThrowaway } from './database.js';
import { Dataset, SIZES, type SizeName } from './generate.js';
import { loadDataset } from './load.js';
import { percentile } from './stats.js';
import { TextModel } from './text-model.js';

interface Options {
  size: SizeName;
  backend: BenchBackend;
  queries: number;
  out: string;
  cacheDir: string;
  pgliteDir: string | null;
}

function parse(argv: string[]): Options {
  const o: Options = {
    size: 'S',
    backend: 'pglite',
    queries: 200,
    out: join('bench', 'results'),
    cacheDir: '.test-cache',
    pgliteDir: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const v = () => argv[++i] ?? '';
    switch (argv[i]) {
      case '--size':
        o.size = v() as SizeName;
        break;
      case '--backend':
        o.backend = v() as BenchBackend;
        break;
      case '--queries':
        o.queries = Number(v());
        break;
      case '--out':
        o.out = v();
        break;
      case '--pglite-dir':
        o.pgliteDir = v();
        o.backend = 'pglite';
        break;
      default:
        throw new Error(`unknown option ${argv[i]}`);
    }
  }
  if (!SIZES[o.size]) throw new Error(`--size: one of ${Object.keys(SIZES).join(', ')}`);
  return o;
}

const log = (m: string) => process.stderr.write(`${m}\n`);

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const embedder = await createEmbedder('offline', { dataDir: o.cacheDir, log });
  const words = await loadWordVectors({ dataDir: o.cacheDir });
  const ds = new Dataset(SIZES[o.size], 42, new TextModel(words.words, 42));
  const throwaway = o.pgliteDir
    ? null
    : await createThrowaway(o.backend, {
        databaseUrl: process.env.DATABASE_URL,
        cacheDir: o.cacheDir,
        embedding: { model: embedder.model, dimensions: embedder.dimensions },
      });
  try {
    let db: Database;
    if (throwaway) {
      db = (await throwaway.openMigrated()).db;
      log(`loading size ${o.size} (${SIZES[o.size].chunks} chunks) into ${o.backend}…`);
      const load = await loadDataset(db, ds, embedder, log);
      log(`loaded in ${(load.totalMs / 1000).toFixed(1)} s`);
    } else {
      db = await openPglite({ dataDir: o.pgliteDir! });
      log(`reusing the loaded PGlite directory ${o.pgliteDir}`);
    }
    const deps = {
      db,
      config: parseConfig({ MEMGATE_LOG_LEVEL: 'silent' }),
      embedder,
      logger: createLogger('silent'),
    };
    const runMode = async (mode: SearchMode) => {
      const totals: number[] = [];
      const perChannel = new Map<string, number[]>();
      const statements: number[] = [];
      const warm = Math.min(20, o.queries);
      for (let i = 0; i < o.queries + warm; i++) {
        const trace = { statements: 0, ms: 0 };
        const counted = countingDatabase(db, trace);
        const service = new SearchService({
          deps,
          db: counted,
          principal: LOCAL_PRINCIPAL,
          loaders: createLoaders(counted, null),
        });
        const started = performance.now();
        const result = await service.search({
          namespaces: [ds.namespace],
          query: ds.searchQuery(i % 256),
          k: 8,
          mode,
          hops: 1,
        });
        const ms = performance.now() - started;
        if (i < warm) continue;
        totals.push(ms);
        statements.push(trace.statements);
        for (const s of result.channelStats) {
          const list = perChannel.get(s.channel) ?? [];
          list.push(s.ms);
          perChannel.set(s.channel, list);
        }
      }
      const channelSum = [...perChannel.values()].reduce((a, l) => a + l.reduce((x, y) => x + y, 0), 0);
      return {
        mode,
        queries: totals.length,
        p50: round(percentile(totals, 50)),
        p95: round(percentile(totals, 95)),
        statements: round(statements.reduce((a, b) => a + b, 0) / statements.length),
        channels: Object.fromEntries(
          [...perChannel].map(([c, l]) => [
            c,
            {
              p50: round(percentile(l, 50)),
              p95: round(percentile(l, 95)),
              share: round(l.reduce((a, b) => a + b, 0) / channelSum),
            },
          ]),
        ),
      };
    };
    const results = [];
    for (const mode of ['HYBRID', 'LEXICAL', 'VECTOR'] as const) {
      results.push(await runMode(mode));
      log(`${mode}: p50 ${results.at(-1)!.p50} ms, p95 ${results.at(-1)!.p95} ms`);
    }
    const report = {
      size: o.size,
      chunks: SIZES[o.size].chunks,
      backend: o.backend,
      cpus: cpus().length,
      loadAverage: loadavg().map(round),
      createdAt: new Date().toISOString(),
      results,
    };
    const lines = [
      `search (k 8, hops 1) over ${report.chunks} chunks on ${o.backend}; ${report.cpus} cores, load ${report.loadAverage.join(' / ')}`,
      '',
      '| mode | p50 ms | p95 ms | SQL stmts | channel p50 ms (share of channel time) |',
      '| --- | ---: | ---: | ---: | --- |',
      ...results.map(
        (r) =>
          `| ${r.mode} | ${r.p50} | ${r.p95} | ${r.statements} | ${Object.entries(r.channels)
            .map(([c, s]) => `${c} ${s.p50} (${Math.round(s.share * 100)}%)`)
            .join(', ')} |`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    mkdirSync(o.out, { recursive: true });
    const base = join(o.out, `search-${o.size}-${o.backend}`);
    writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(`${base}.md`, `${lines.join('\n')}\n`);
    log(`wrote ${base}.json and .md`);
    await db.close();
  } finally {
    await throwaway?.destroy();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
