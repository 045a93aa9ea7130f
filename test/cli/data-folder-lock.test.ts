import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir, lockFilePath } from '../../src/db/data-dir-lock.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { onNativePostgres, openFromTemplate, TEST_EMBEDDING } from '../helpers/test-database.js';

interface Finished {
  status: number | null;
  stdout: string;
  stderr: string;
}

// Real processes on one embedded data folder: a server, then everything else that opens it.
// Embedded pass only: a native PostgreSQL server has no data folder to lock.
describe.skipIf(onNativePostgres)('one process per embedded data folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-lock-'));
  const dataDir = join(dir, 'data');
  const pgdata = join(dataDir, 'pgdata');
  const env = (extra: Record<string, string> = {}) => {
    const e: Record<string, string | undefined> = {
      ...process.env,
      MEMGATE_DATA_DIR: dataDir,
      MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
      MEMGATE_LOG_LEVEL: 'info',
      MEMGATE_PORT: '0',
      ...extra,
    };
    delete e.DATABASE_URL;
    return e;
  };
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    const db = await openFromTemplate(pgdata);
    await db.close();
  });
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (script: string, args: string[], extra?: Record<string, string>) =>
    new Promise<Finished>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: env(extra) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  /** Starts `src/main.ts` and resolves with its URL once it logs that it listens. */
  const startServer = (extra?: Record<string, string>) =>
    new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: env(extra) });
      children.push(child);
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /"msg":"memgate listening","url":"([^"]+)"/.exec(out);
        if (m) resolve({ child, url: m[1]! });
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (status) => reject(new Error(`server exited ${status}: ${err}`)));
    });
  const stopped = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.on('exit', (code) => resolve(code));
    });

  const obs = (i: number) =>
    JSON.stringify({
      source: { system: 'chat', stream: 'lock', externalId: `m${i}` },
      kind: 'message',
      occurredAt: '2024-03-01T10:00:00Z',
      content: `message ${i}`,
    });

  it('refuses a second server, migrate, import and reindex while a server runs; import --url writes through it', async () => {
    const { child, url } = await startServer();
    const lock = JSON.parse(readFileSync(lockFilePath(pgdata), 'utf8')) as { pid: number; startedAt: string };
    expect(lock.pid).toBe(child.pid);
    expect(Number.isNaN(Date.parse(lock.startedAt))).toBe(false);

    const file = join(dir, 'in.jsonl');
    writeFileSync(file, [obs(1), obs(2), obs(3), '{bad'].join('\n'));
    const refusals = await Promise.all([
      run('src/main.ts', []),
      run('src/cli.ts', ['migrate']),
      run('src/cli.ts', ['import', file, '--namespace', 'lock']),
      run('src/cli.ts', ['reindex']),
    ]);
    for (const r of refusals) {
      expect(r.status).not.toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`in use by memgate process ${child.pid} .*memgate import --url`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }

    const imported = await run('src/cli.ts', [
      'import',
      file,
      '--namespace',
      'lock',
      '--url',
      url,
      '--batch',
      '2',
    ]);
    expect(imported.stdout).toMatch(/accepted 3 {2}partial 0 {2}duplicate 0 {2}rejected 1/);
    expect(imported.stdout).toMatch(/line 4: not JSON: .*\(BAD_USER_INPUT\)/);
    expect(imported.status).toBe(1);
    const again = await run('src/cli.ts', ['import', file, '--namespace', 'lock', '--url', url]);
    expect(again.stdout).toMatch(/accepted 0 {2}partial 0 {2}duplicate 3 {2}rejected 1/);

    child.kill('SIGTERM');
    expect(await stopped(child)).toBe(0);
    expect(existsSync(lockFilePath(pgdata))).toBe(false);

    // What went through the server is on disk for the next process.
    const db = await openPglite({ dataDir: pgdata });
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM observations WHERE namespace = 'lock'`,
    );
    await db.close();
    expect(rows[0]!.n).toBe(3);
  }, 240_000);

  it('takes over a lock whose process is gone (killed without cleanup)', async () => {
    const { child } = await startServer();
    child.kill('SIGKILL');
    await stopped(child);
    expect(existsSync(lockFilePath(pgdata))).toBe(true);
    const migrated = await run('src/cli.ts', ['migrate']);
    expect(migrated.stderr).toBe('');
    expect(migrated.status).toBe(0);
    expect(existsSync(lockFilePath(pgdata))).toBe(false);
  }, 240_000);

  it('a second start on a taken port says so in one line and exits non-zero', async () => {
    const { child, url } = await startServer();
    const port = new URL(url).port;
    const other = join(dir, 'other');
    const second = await run('src/main.ts', [], { MEMGATE_PORT: port, MEMGATE_DATA_DIR: other });
    expect(second.status).toBe(1);
    expect(second.stderr.trim()).toBe(
      `memgate failed to start: port 127.0.0.1:${port} is already in use (another memgate?); stop it or set MEMGATE_PORT`,
    );
    // Refused before anything was opened.
    expect(existsSync(join(other, 'pgdata'))).toBe(false);
    child.kill('SIGTERM');
    await stopped(child);
  }, 240_000);

  it('in one process, a second lock on the same folder is refused until the first is released', () => {
    const folder = join(dir, 'in-process');
    const first = lockDataDir(folder);
    expect(() => lockDataDir(folder)).toThrow(DataDirLockedError);
    first.release();
    lockDataDir(folder).release();
    expect(existsSync(lockFilePath(folder))).toBe(false);
  });
});
