/**
 * Gateways started together against one empty PostgreSQL database (a deployment of several
 * replicas of the gateway) migrate it one after the other: one applies every migration, the
 * others wait for it and find nothing left to do. Without the lock they raced on the same
 * CREATE statements and some failed to start.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres-database.js';
import { migrate, migrationFiles } from '../../src/kernel/store/migrate.js';
import { TEST_EMBEDDING, onNativePostgres } from '../helpers/test-database.js';

async function onServer(work: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.end();
  }
}

// Native pass only: the embedded database belongs to one process.
describe.skipIf(!onNativePostgres)('migrating one database from several processes at once', () => {
  it('applies every migration once; the other starts find nothing to do', async () => {
    const name = `memgate_m_${randomBytes(6).toString('hex')}`;
    await onServer((c) => c.query(`CREATE DATABASE ${name}`));
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    const gateways = await Promise.all(
      [1, 2, 3].map(() => openPostgres({ connectionString: url.toString(), statementTimeoutMs: 60_000 })),
    );
    try {
      const applied = await Promise.all(gateways.map((db) => migrate(db, TEST_EMBEDDING)));
      const all = migrationFiles().map((f) => f.name);
      expect(applied.map((a) => a.length).sort((a, b) => a - b)).toEqual([0, 0, all.length]);
      expect(applied.flat()).toEqual(all);
    } finally {
      await Promise.all(gateways.map((db) => db.close()));
      await onServer((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  }, 120_000);
});
