/**
 * Throwaway databases for a benchmark run: a PGlite data directory under the system temp
 * directory, or a new database on the server DATABASE_URL points at. Never the user's
 * `.memgate` data directory, never an existing database.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Database } from '../src/db/database.js';
import { openPglite } from '../src/db/pglite-database.js';
import { openPostgres } from '../src/db/postgres-database.js';
import { migrate, migrationFiles } from '../src/kernel/store/migrate.js';

export type BenchBackend = 'pglite' | 'postgres';

/** Where the run's data lives; enough for another process to open it. */
export type Location =
  | { backend: 'pglite'; dir: string }
  | { backend: 'postgres'; url: string; name: string };

export interface Throwaway {
  location: Location;
  /** Opens the database (the run's one connection pool or PGlite instance). */
  open(): Promise<Database>;
  /** Opens and migrates a fresh database; returns the milliseconds it took. */
  openMigrated(): Promise<{ db: Database; ms: number; fromTemplate: boolean }>;
  /** Deletes everything the run created. */
  destroy(): Promise<void>;
  /** A kept database that already holds this run's dataset: the load is skipped. */
  reused: boolean;
}

export const STATEMENT_TIMEOUT_MS = 600_000;

const DIR_PREFIX = 'memgate-bench-';
const OWNER_FILE = 'owner.pid';

/**
 * A run killed while PGlite computes (WASM blocks the event loop, so no signal handler runs)
 * leaves its directory behind: delete those whose owning process is gone.
 */
function reapStaleDirectories(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue; // not ours to judge
    }
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ThrowawayOptions {
  databaseUrl: string | undefined;
  /** Where a migrated empty PGlite template is kept between runs (initdb is the slow part). */
  cacheDir: string;
  embedding: { model: string; dimensions: number };
  /**
   * postgres only: a database kept between runs under this name (created and loaded on the
   * first run, then reused as it is), so profiling at size L does not pay the load every time.
   */
  keepDatabase?: string | undefined;
}

const LOADED_MARKER = 'memgate_bench_loaded';

/** Marks a kept database as holding the dataset `key` (size + seed), so the next run reuses it. */
export async function markLoaded(db: Database, key: string): Promise<void> {
  await db.query(`/* benchMarkLoaded */ CREATE TABLE IF NOT EXISTS ${LOADED_MARKER} (key text PRIMARY KEY)`);
  await db.query(
    `/* benchMarkLoaded */ INSERT INTO ${LOADED_MARKER} (key) VALUES ($1) ON CONFLICT DO NOTHING`,
    [key],
  );
}

async function holdsDataset(url: string, key: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ n: number }>(
      `/* benchLoadedCheck */ SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = $1`,
      [LOADED_MARKER],
    );
    if (!r.rows[0]?.n) return false;
    const k = await client.query(`/* benchLoadedCheck */ SELECT 1 FROM ${LOADED_MARKER} WHERE key = $1`, [
      key,
    ]);
    return (k.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

export async function createThrowaway(
  backend: BenchBackend,
  options: ThrowawayOptions,
  datasetKey = '',
): Promise<Throwaway> {
  const { databaseUrl, embedding } = options;
  if (backend === 'pglite' && options.keepDatabase)
    throw new Error('--keep-db works with --backend postgres only');
  if (backend === 'pglite') {
    reapStaleDirectories();
    const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
    writeFileSync(join(dir, OWNER_FILE), String(process.pid));
    const template = join(options.cacheDir, `bench-pglite-template-${templateId(embedding)}.tar.gz`);
    return {
      location: { backend, dir },
      open: () => openPglite({ dataDir: pgliteDir(dir) }),
      async openMigrated() {
        const started = performance.now();
        const fromTemplate = existsSync(template);
        const db = await openPglite({
          dataDir: pgliteDir(dir),
          ...(fromTemplate ? { loadDataDir: new Blob([readFileSync(template)]) } : {}),
        });
        await migrate(db, embedding);
        if (!fromTemplate) {
          const dump = await db.pglite.dumpDataDir('gzip');
          mkdirSync(options.cacheDir, { recursive: true });
          const tmp = `${template}.${process.pid}.tmp`;
          writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
          renameSync(tmp, template);
        }
        return { db, ms: performance.now() - started, fromTemplate };
      },
      destroy: async () => rmSync(dir, { recursive: true, force: true }),
      reused: false,
    };
  }
  if (!databaseUrl) {
    throw new Error(
      '--backend postgres needs DATABASE_URL (a server where this role may CREATE DATABASE); on this machine: ' +
        'scripts/with-native-postgres.sh npm run bench -- --backend postgres',
    );
  }
  const kept = options.keepDatabase;
  if (kept !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(kept))
    throw new Error(`--keep-db must be a lower-case SQL identifier, got ${kept}`);
  const name = kept ?? `memgate_bench_${randomBytes(5).toString('hex')}`;
  const url = withDatabase(databaseUrl, name);
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  let reused = false;
  try {
    const exists = await admin.query(
      `/* benchDatabaseExists */ SELECT 1 FROM pg_database WHERE datname = $1`,
      [name],
    );
    if (kept && exists.rowCount && (await holdsDataset(url, datasetKey))) reused = true;
    else {
      if (exists.rowCount) await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
    }
  } finally {
    await admin.end();
  }
  const open = () => openPostgres({ connectionString: url, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  return {
    location: { backend, url, name },
    open,
    async openMigrated() {
      const started = performance.now();
      const db = await open();
      await migrate(db, embedding);
      return { db, ms: performance.now() - started, fromTemplate: false };
    },
    reused,
    destroy: async () => {
      if (kept) return;
      const dropper = new pg.Client({ connectionString: databaseUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** Changes whenever a migration, the embedding or PGlite itself does. */
function templateId(embedding: { model: string; dimensions: number }): string {
  const h = createHash('sha256');
  for (const f of migrationFiles()) h.update(f.name).update(f.sql);
  h.update(JSON.stringify(embedding));
  try {
    h.update(readFileSync(join(process.cwd(), 'node_modules/@electric-sql/pglite/package.json')));
  } catch {
    // version unknown: the migrations still key the template
  }
  return h.digest('hex').slice(0, 16);
}

export function pgliteDir(dir: string): string {
  return join(dir, 'pgdata');
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
