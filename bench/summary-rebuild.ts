/**
 * How long rebuilding entity summaries takes over a loaded dataset: N entities of the dataset
 * (every kind a summary is made for; evenly spread over the key order) are marked for a refresh
 * and the refresher drains them exactly as it does in a gateway (claim 200, read their material in
 * one statement, draft, embed, replace their summary chunks, clear the marks). Prints and writes
 * entities per second, the wall time for all of them, and statements per batch.
 *
 *   npm run bench:summaries -- --size L --backend postgres --entities 10000
 *   (DATABASE_URL: a server where this role may CREATE DATABASE; --keep-db NAME reuses a load)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseConfig } from '../src/config.js';
import { type Database, type SqlTrace, countingDatabase } from '../src/db/database.js';
import { createLogger } from '../src/logger.js';
import { SummaryRefresher } from '../src/modules/summaries/index.js';
import { createEmbedder } from '../src/providers/create-embedder.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import { type BenchBackend, createThrowaway, markLoaded } from './database.js';
import { Dataset, SIZES, type SizeName } from './generate.js';
import { loadDataset } from './load.js';
import { TextModel } from './text-model.js';

/** The main benchmark's default seed: a database it kept (--keep-db) is reused as it is. */
const SEED = 42;

interface Options {
  size: SizeName;
  backend: BenchBackend;
  entities: number;
  out: string | null;
  keepDb: string | null;
  cacheDir: string;
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    size: 'L',
    backend: process.env.DATABASE_URL ? 'postgres' : 'pglite',
    entities: 10_000,
    out: null,
    keepDb: null,
    cacheDir: process.env.MEMGATE_DATA_DIR ?? './.memgate',
  };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${argv[i - 1]} needs a value`);
      return v;
    };
    const flag = argv[i];
    if (flag === '--size') options.size = value() as SizeName;
    else if (flag === '--backend') options.backend = value() as BenchBackend;
    else if (flag === '--entities') options.entities = Number(value());
    else if (flag === '--out') options.out = value();
    else if (flag === '--keep-db') options.keepDb = value();
    else throw new Error(`unknown option ${flag}`);
  }
  if (!(options.size in SIZES)) throw new Error('--size is quick, S or L');
  return options;
}

/** Marks `n` entities spread evenly over the key order (the refresher takes them by due time). */
async function markSpread(db: Database, namespace: string, n: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `/* benchMarkSummaries */
     WITH picked AS (
       SELECT e.key, row_number() OVER (ORDER BY e.key) AS i, count(*) OVER () AS total FROM entities e
       WHERE e.namespace = $1 AND NOT e.placeholder AND e.kind NOT IN ('observation', 'episode', 'session')
     ), marked AS (
       INSERT INTO summary_refresh (namespace, entity_key, due_at)
       SELECT $1, p.key, now() - interval '1 second' FROM picked p
       WHERE p.i % greatest(1, p.total / $2) = 0
       ORDER BY p.i LIMIT $2
       ON CONFLICT (namespace, entity_key) DO UPDATE SET due_at = excluded.due_at
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM marked`,
    [namespace, n],
  );
  return rows[0]?.n ?? 0;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const log = (m: string) => process.stderr.write(`[summaries] ${m}\n`);
  const spec = SIZES[options.size];
  const embedder = await createEmbedder('offline', { dataDir: options.cacheDir, log });
  const words = await loadWordVectors({ dataDir: options.cacheDir });
  const ds = new Dataset(spec, SEED, new TextModel(words.words, SEED));
  const datasetKey = `${spec.name}:${SEED}:${embedder.model}`;
  const throwaway = await createThrowaway(
    options.backend,
    {
      databaseUrl: process.env.DATABASE_URL,
      cacheDir: options.cacheDir,
      embedding: { model: embedder.model, dimensions: embedder.dimensions },
      keepDatabase: options.keepDb ?? undefined,
    },
    datasetKey,
  );
  try {
    const { db } = await throwaway.openMigrated();
    if (!throwaway.reused) {
      log(`loading ${spec.name} (${ds.entities} entities, ${spec.facts} facts, ${spec.chunks} chunks)`);
      await loadDataset(db, ds, embedder, log);
      if (options.keepDb) await markLoaded(db, datasetKey);
    }
    await db.query('/* benchClearSummaries */ DELETE FROM summary_refresh');
    const marked = await markSpread(db, ds.namespace, options.entities);
    const trace: SqlTrace = { statements: 0, ms: 0 };
    const counted = countingDatabase(db, trace);
    const config = parseConfig({ MEMGATE_LOG_LEVEL: 'warn' });
    const deps = { db: counted, config, embedder, logger: createLogger('warn') };
    const refresher = new SummaryRefresher(deps);
    log(`rebuilding the summaries of ${marked} entities`);
    const started = performance.now();
    const rebuilt = await refresher.drain();
    const ms = performance.now() - started;
    const stored = await db.query<{ n: number; avg: number }>(
      `/* benchCountSummaries */ SELECT count(*)::int AS n, coalesce(avg(length(text)), 0)::float8 AS avg
       FROM chunks WHERE namespace = $1 AND kind = 'summary'`,
      [ds.namespace],
    );
    const batches = Math.ceil(rebuilt / 200);
    const result = {
      size: spec.name,
      backend: db.backend,
      entities: rebuilt,
      summaries: stored.rows[0]!.n,
      averageChars: Math.round(stored.rows[0]!.avg),
      seconds: ms / 1000,
      entitiesPerSecond: rebuilt / (ms / 1000),
      statementsPerBatch: trace.statements / Math.max(1, batches),
      sqlShare: trace.ms / ms,
      createdAt: new Date().toISOString(),
    };
    const line =
      `${result.backend} ${result.size}: ${result.entities} entities rebuilt in ${result.seconds.toFixed(1)} s ` +
      `(${result.entitiesPerSecond.toFixed(0)}/s), ${result.summaries} summaries of ${result.averageChars} characters on average, ` +
      `${result.statementsPerBatch.toFixed(1)} statements per batch of 200, ${(result.sqlShare * 100).toFixed(0)}% of the time in SQL`;
    process.stdout.write(`${line}\n`);
    if (options.out) {
      mkdirSync(dirname(options.out), { recursive: true });
      writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
      writeFileSync(options.out.replace(/\.json$/, '.md'), `# Summary rebuild\n\n${line}\n`);
    }
    await db.close();
  } finally {
    if (!options.keepDb) await throwaway.destroy();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
