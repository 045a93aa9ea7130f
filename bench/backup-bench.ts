/**
 * Times backup, restore, export and checksums on a bench database:
 *
 *   npm run bench:backup -- --size S
 *   scripts/with-native-postgres.sh npm run bench:backup -- --size L --backend postgres
 *
 * Loads the seeded dataset of that size into a throwaway database (as `npm run bench` does),
 * backs it up with `dumpDatabase`, restores the file into a second throwaway database, exports
 * every namespace as JSON Lines and computes the digests of both sides. Writes
 * bench/results/backup-<size>-<backend>.json and .md.
 */
import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from '../src/cli/args.js';
import { dumpDatabase } from '../src/db/dump.js';
import { restoreDump } from '../src/db/restore.js';
import { createEmbedder } from '../src/providers/create-embedder.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import { checksums, writeExport } from '../src/modules/portability/export-service.js';
import { type BenchBackend, createThrowaway } from './database.js';
import { Dataset, SIZES, type SizeName } from './generate.js';
import { loadDataset } from './load.js';
import { TextModel } from './text-model.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (message: string) => process.stderr.write(`[bench:backup] ${message}\n`);

/** Wall seconds, and this process's CPU seconds (with PGlite the database runs in it). */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; cpuSeconds: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return {
    value,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

async function main(): Promise<void> {
  const { options } = parseArgs(process.argv.slice(2), ['size', 'backend']);
  const size = String(options.get('size') ?? 'S') as SizeName;
  const backend = String(options.get('backend') ?? 'pglite') as BenchBackend;
  const spec = SIZES[size];
  if (!spec) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
  const cacheDir = process.env.MEMGATE_BENCH_CACHE_DIR ?? join(root, '.test-cache'); // as npm run bench
  const embedder = await createEmbedder('offline', { dataDir: cacheDir, log });
  const words = await loadWordVectors({ dataDir: cacheDir });
  const ds = new Dataset(spec, 42, new TextModel(words.words, 42));
  const embedding = { model: embedder.model, dimensions: embedder.dimensions };
  const options_ = { databaseUrl: process.env.DATABASE_URL, cacheDir, embedding };
  const source = await createThrowaway(backend, options_);
  const target = await createThrowaway(backend, options_);
  const work = mkdtempSync(join(tmpdir(), 'memgate-bench-backup-'));
  try {
    const { db } = await source.openMigrated();
    log(`loading size ${size} (${spec.chunks} chunks, ${spec.entities} entities, ${spec.facts} facts)`);
    await loadDataset(db, ds, embedder, log);
    const file = join(work, 'backup.sql');
    log('backup');
    const backup = await timed(async () => pipeline(await dumpDatabase(db), createWriteStream(file)));
    const backupBytes = statSync(file).size;
    log(`backup: ${backup.seconds.toFixed(1)} s, ${backupBytes} bytes`);
    const exportFile = join(work, 'export.jsonl');
    const out = createWriteStream(exportFile);
    const exported = await timed(() =>
      writeExport(db, null, async (line) => {
        if (!out.write(line)) await once(out, 'drain');
      }),
    );
    out.end();
    await once(out, 'finish');
    const digestsBefore = await timed(() => checksums(db, null));
    await db.close();

    log('restore');
    const restoreDb = await target.open();
    const restore = await timed(() => restoreDump(restoreDb, createReadStream(file)));
    await restoreDb.close();
    const restored = await target.open();
    const digestsAfter = await checksums(restored, null);
    await restored.close();
    const equal = JSON.stringify(digestsBefore.value) === JSON.stringify(digestsAfter);

    const result = {
      size,
      backend,
      date: new Date().toISOString(),
      machine: `${cpus().length} cores (${cpus()[0]?.model ?? '?'})`,
      loadAverage: loadavg()[0],
      dataset: spec,
      backup: { seconds: round(backup.seconds), cpuSeconds: round(backup.cpuSeconds), bytes: backupBytes },
      restore: {
        seconds: round(restore.seconds),
        cpuSeconds: round(restore.cpuSeconds),
        statements: restore.value.statements,
      },
      export: {
        seconds: round(exported.seconds),
        cpuSeconds: round(exported.cpuSeconds),
        bytes: statSync(exportFile).size,
        records: exported.value.records,
      },
      checksum: { seconds: round(digestsBefore.seconds), cpuSeconds: round(digestsBefore.cpuSeconds) },
      digestsEqualAfterRestore: equal,
    };
    const dir = join(root, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const base = join(dir, `backup-${size}-${backend}`);
    writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
    const md = [
      `# Backup and export, size ${size}, ${backend}`,
      '',
      `${result.date}, ${result.machine}, load average ${result.loadAverage.toFixed(1)}; ${spec.chunks} chunks, ${spec.entities} entities, ${spec.facts} facts.`,
      'CPU is this process only: with PGlite it includes the database; native pg_dump and the server are not in it.',
      '',
      '| step | wall s | CPU s | size |',
      '| --- | ---: | ---: | ---: |',
      `| backup (pg_dump) | ${result.backup.seconds} | ${result.backup.cpuSeconds} | ${result.backup.bytes} bytes |`,
      `| restore into a fresh database | ${result.restore.seconds} | ${result.restore.cpuSeconds} | ${result.restore.statements} statements |`,
      `| export (JSON Lines) | ${result.export.seconds} | ${result.export.cpuSeconds} | ${result.export.bytes} bytes, ${result.export.records} records |`,
      `| export --checksum | ${result.checksum.seconds} | ${result.checksum.cpuSeconds} | — |`,
      '',
      `Digests equal after the restore: ${equal ? 'yes' : 'NO'}.`,
      '',
    ].join('\n');
    writeFileSync(`${base}.md`, md);
    process.stdout.write(md);
    if (!equal) process.exitCode = 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
    await source.destroy();
    await target.destroy();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

await main();
