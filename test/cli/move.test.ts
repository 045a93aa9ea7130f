import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { openFromTemplate } from '../helpers/test-database.js';

/**
 * `memgate move` through the real CLI in a child process: every message names the source and
 * the target (a folder's absolute path, a server URL with its password masked), a move onto
 * the database it reads from is refused before anything is opened, `--from` overrides
 * DATABASE_URL, and the progress lines speak in B/kB/MB. On the native pass (DATABASE_URL set)
 * the server cases run against real databases of that server; without it, against embedded
 * folders and a server address nothing listens on.
 */
const nativeUrl = process.env.DATABASE_URL;
const root = mkdtempSync(join(tmpdir(), 'memgate-move-'));
const cleanups: (() => Promise<void>)[] = [];
/** A password no output may contain. */
const SECRET = 'move-secret-4417';
const unreachable = `postgres://memgate:${SECRET}@127.0.0.1:1/elsewhere`;

const folder = () => join(root, `folder-${randomBytes(4).toString('hex')}`);

/** A fresh database on the test server, its URL carrying the password of the server's URL. */
async function freshServerDatabase(): Promise<string> {
  const name = `memgate_mv_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: nativeUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const dropper = new pg.Client({ connectionString: nativeUrl });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dropper.end();
  });
  const url = new URL(nativeUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

function withoutPassword(url: string): string {
  const u = new URL(url);
  u.password = '***';
  return u.toString();
}

describe('memgate move: both sides named, one database never moved onto itself', () => {
  let source: string;

  beforeAll(async () => {
    // A memgate database in a folder, from the migrated template (no initdb in the test).
    source = folder();
    const db = await openFromTemplate(join(source, 'pgdata'));
    await db.close();
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it('says which server DATABASE_URL made the source, password masked, when that server is not there', async () => {
    const target = folder();
    const res = await cli(['move', '--to', target], { DATABASE_URL: unreachable });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `moving PostgreSQL ${withoutPassword(unreachable)} (DATABASE_URL) → embedded folder ${target} (--to)`,
    );
    expect(res.stderr).toContain(
      `Cannot read the source, PostgreSQL ${withoutPassword(unreachable)} (DATABASE_URL)`,
    );
    expect(res.stderr + res.stdout).not.toContain(SECRET);
    expect(existsSync(target)).toBe(false);
  }, 120_000);

  it.skipIf(!nativeUrl)(
    'says a DATABASE_URL source has no memgate schema, and how to move a folder instead',
    async () => {
      const empty = await freshServerDatabase();
      const target = folder();
      const res = await cli(['move', '--to', target], { DATABASE_URL: empty });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(
        `Nothing to move: the source, PostgreSQL ${withoutPassword(empty)} (DATABASE_URL), has no memgate schema.`,
      );
      expect(res.stderr).toContain('memgate move --from FOLDER --to');
      expect(res.stderr).toContain(`embedded folder ${target} (--to)`);
      expect(res.stderr).not.toContain(`:${new URL(empty).password}@`);
      expect(existsSync(target)).toBe(false);
    },
    120_000,
  );

  it('says a source folder holds no database, naming it and what named it', async () => {
    const missing = folder();
    const target = folder();
    const res = await cli(['move', '--to', target], { MEMGATE_DATA_DIR: missing });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `Nothing to move: the source, embedded folder ${missing} (MEMGATE_DATA_DIR), holds no embedded database.`,
    );
    expect(existsSync(target)).toBe(false);
  }, 120_000);

  it('refuses to move a database onto itself, however the two are spelled', async () => {
    const sameFolder = await cli(['move', '--to', `${source}/`], { MEMGATE_DATA_DIR: source });
    expect(sameFolder.code).toBe(2);
    expect(sameFolder.stderr).toContain(
      `The source and the target are the same database: embedded folder ${source} (MEMGATE_DATA_DIR) and embedded folder ${source} (--to).`,
    );
    expect(sameFolder.stderr).toContain('Usage: memgate move');

    // Same host (localhost is 127.0.0.1), default port, same database: refused without connecting.
    const a = `postgres://memgate:${SECRET}@localhost/memgate_prod`;
    const b = `postgres://other:${SECRET}x@127.0.0.1:5432/memgate_prod`;
    const sameServer = await cli(['move', '--from', a, '--to', b]);
    expect(sameServer.code).toBe(2);
    expect(sameServer.stderr).toContain('The source and the target are the same database');
    expect(sameServer.stderr).toContain('postgres://memgate:***@localhost/memgate_prod (--from)');
    expect(sameServer.stderr).toContain('postgres://other:***@127.0.0.1:5432/memgate_prod (--to)');
    expect(sameServer.stderr).not.toContain(SECRET);

    // The usual slip: DATABASE_URL already names the new server when the folder is to be moved.
    const fromEnv = await cli(['move', '--to', b], { DATABASE_URL: a });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain(
      'same database: PostgreSQL postgres://memgate:***@localhost/memgate_prod (DATABASE_URL) and PostgreSQL postgres://other:***@127.0.0.1:5432/memgate_prod (--to)',
    );
    expect(fromEnv.stderr).toContain('to move an embedded folder, name it: memgate move --from FOLDER');
    expect(fromEnv.stderr).not.toContain(SECRET);

    // Another database on the same server is another database.
    const other = await cli(['move', '--from', a, '--to', b.replace('memgate_prod', 'memgate_new')]);
    expect(other.stderr).not.toContain('same database');
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      'Cannot read the source, PostgreSQL postgres://memgate:***@localhost/memgate_prod (--from)',
    );
  }, 120_000);

  it('moves the folder named by --from although DATABASE_URL names another database, and says so', async () => {
    const target = nativeUrl ? await freshServerDatabase() : folder();
    const targetText = nativeUrl ? `PostgreSQL ${withoutPassword(target)}` : `embedded folder ${target}`;
    // DATABASE_URL points nowhere: were it read, the move would fail.
    const res = await cli(['move', '--from', source, '--to', target], { DATABASE_URL: unreachable });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`moving embedded folder ${source} (--from) → ${targetText} (--to)`);
    expect(res.stdout).toContain(`moved embedded folder ${source} → ${targetText} in `);
    expect(res.stdout).toContain(`The source, embedded folder ${source}, is unchanged`);
    expect(res.stdout).toMatch(/digests equal on both sides: /);
    if (nativeUrl) {
      expect(res.stdout).toContain(`DATABASE_URL='${withoutPassword(target)}' npm start`);
      expect(res.stdout + res.stderr).not.toContain(`:${new URL(target).password}@`);
    } else {
      expect(res.stdout).toContain(`MEMGATE_DATA_DIR='${target}' npm start`);
    }
    // Whatever progress lines a slow machine shows, they are progress lines in scaled units.
    for (const line of res.stderr.trim().split('\n').slice(1)) {
      expect(line).toMatch(/^(copy|checksum \((source|target)\)) {2}/);
      expect(line).not.toMatch(/\d bytes/);
    }

    // The same move again: the target now holds a database, and the message says which.
    const again = await cli(['move', '--from', source, '--to', target], { DATABASE_URL: unreachable });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`The target, ${targetText} (--to), already`);
  }, 300_000);

  it('reports progress in units that scale when asked for every line', async () => {
    const target = folder();
    const res = await cli(['move', '--from', source, '--to', target], { MEMGATE_PROGRESS_MS: '0' });
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stderr.trim().split('\n').slice(1);
    const copy = lines.filter((l) => l.startsWith('copy  '));
    expect(copy.length).toBeGreaterThan(0);
    for (const line of copy) {
      expect(line).toMatch(/^copy {2}\d+(\.\d)? (B|kB|MB) {2}\d+(\.\d)? (B|kB|MB)\/s$/);
    }
    // The dump is larger than a kilobyte: its last line has left plain bytes behind.
    expect(copy.at(-1)).toMatch(/ (kB|MB) /);
    for (const line of lines) expect(line).not.toMatch(/\d bytes/);
  }, 300_000);
});
