/**
 * Throwaway databases for a benchmark run: a PGlite data directory under the system temp
 * directory, or a new database on the server DATABASE_URL points at. Never the user's
 * `.memgate` data directory, never an existing database.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Database } from '../src/db/database.js';
import { openPglite } from '../src/db/pglite-database.js';
import { openPostgres } from '../src/db/postgres-database.js';

export type BenchBackend = 'pglite' | 'postgres';

/** Where the run's data lives; enough for another process to open it. */
export type Location =
  | { backend: 'pglite'; dir: string }
  | { backend: 'postgres'; url: string; name: string };

export interface Throwaway {
  location: Location;
  /** Opens the database (the run's one connection pool or PGlite instance). */
  open(): Promise<Database>;
  /** Deletes everything the run created. */
  destroy(): Promise<void>;
}

export const STATEMENT_TIMEOUT_MS = 600_000;

export async function createThrowaway(
  backend: BenchBackend,
  databaseUrl: string | undefined,
): Promise<Throwaway> {
  if (backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'memgate-bench-'));
    return {
      location: { backend, dir },
      open: () => openPglite({ dataDir: pgliteDir(dir) }),
      destroy: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!databaseUrl) {
    throw new Error(
      '--backend postgres needs DATABASE_URL (a server where this role may CREATE DATABASE); on this machine: ' +
        'scripts/with-native-postgres.sh npm run bench -- --backend postgres',
    );
  }
  const name = `memgate_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(databaseUrl, name);
  return {
    location: { backend, url, name },
    open: () => openPostgres({ connectionString: url, statementTimeoutMs: STATEMENT_TIMEOUT_MS }),
    destroy: async () => {
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

export function pgliteDir(dir: string): string {
  return join(dir, 'pgdata');
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
