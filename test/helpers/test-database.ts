import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import { migrate, migrationFiles } from '../../src/kernel/store/migrate.js';

/** Tests embed with the deterministic hashing embedder; the template database is built for it. */
export const TEST_EMBEDDING = { model: 'hashing:64', dimensions: 64 };

/**
 * The suite runs twice in CI: on native PostgreSQL when DATABASE_URL is set, on embedded PGlite
 * otherwise. A test of one backend's own behaviour (a data folder, a server-side statement
 * timeout) runs on that backend's pass and is skipped on the other.
 */
export const onNativePostgres = Boolean(process.env.DATABASE_URL);

const cacheDir = join(process.cwd(), '.test-cache');

function templateId(): string {
  const h = createHash('sha256');
  for (const f of migrationFiles()) h.update(f.name).update(f.sql);
  h.update(JSON.stringify(TEST_EMBEDDING));
  return h.digest('hex').slice(0, 16);
}

export function pgliteTemplatePath(): string {
  return join(cacheDir, `pglite-template-${templateId()}.tar.gz`);
}

export function nativeTemplateName(): string {
  return `memgate_tpl_${templateId()}`;
}

/** Builds the migrated template once per suite run (global setup); initdb is the slow part. */
export async function prepareTemplate(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const name = nativeTemplateName();
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${name}`);
      const db = await openPostgres({
        connectionString: withDatabase(url, name),
        statementTimeoutMs: 60_000,
        max: 1,
      });
      await migrate(db, TEST_EMBEDDING);
      await db.close();
    }
    await admin.end();
    return;
  }
  await preparePgliteTemplate();
}

/** The embedded template alone: a test that builds a data folder needs it on either backend. */
export async function preparePgliteTemplate(): Promise<void> {
  const path = pgliteTemplatePath();
  if (existsSync(path)) return;
  mkdirSync(cacheDir, { recursive: true });
  const db = await openPglite({});
  await migrate(db, TEST_EMBEDDING);
  const dump = await db.pglite.dumpDataDir('gzip');
  await db.close();
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  renameSync(tmp, path);
}

/**
 * An embedded database in `pgdata` unpacked from the migrated template (no initdb, no
 * migrations), on either backend: the template is built first when this run has not yet.
 */
export async function openFromTemplate(pgdata: string): ReturnType<typeof openPglite> {
  await preparePgliteTemplate();
  return openPglite({ dataDir: pgdata, loadDataDir: new Blob([readFileSync(pgliteTemplatePath())]) });
}

/** A fresh, migrated, empty database for one test file, on the backend CI selected. */
export async function openTestDatabase(): Promise<Database & { url?: string }> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const name = `memgate_t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${nativeTemplateName()}`);
    await admin.end();
    const db = await openPostgres({ connectionString: withDatabase(url, name), statementTimeoutMs: 30_000 });
    const close = db.close.bind(db);
    return Object.assign(db, {
      url: withDatabase(url, name),
      close: async () => {
        await close();
        const dropper = new pg.Client({ connectionString: url });
        await dropper.connect();
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await dropper.end();
      },
    });
  }
  const blob = new Blob([readFileSync(pgliteTemplatePath())]);
  return openPglite({ loadDataDir: blob });
}

/** The URL of `database` on the server `url` names. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
