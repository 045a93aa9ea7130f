import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

/**
 * `memgate import --bulk --url`: the bulk path through a running gateway (the way to load
 * while a server holds the data folder), with the progress bar, the summary and a re-run that
 * skips everything, on whichever backend the gateway runs.
 */
describe('memgate import --bulk --url', () => {
  let gw: TestGateway;
  let dir: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    dir = mkdtempSync(join(tmpdir(), 'memgate-bulk-url-'));
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env, MEMGATE_LOG_LEVEL: 'warn', MEMGATE_PROGRESS_MS: '0' };
      delete env.DATABASE_URL;
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'import', ...args], { env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  it('loads a file, reports progress with an ETA, rebuilds the index on request, and resumes', async () => {
    const file = join(dir, 'history.jsonl');
    const lines = Array.from({ length: 60 }, (_, i) =>
      JSON.stringify({
        source: { system: 'chat', stream: 'ops', externalId: `u${i}` },
        kind: 'message',
        occurredAt: new Date(Date.UTC(2024, 3, 1, 8, i)).toISOString(),
        content: `ops note ${i}: deployed build ${1000 + i}`,
      }),
    );
    writeFileSync(file, `${[...lines, '{broken'].join('\n')}\n`);
    const args = [file, '--namespace', 'bulk-url', '--bulk', '--batch', '25', '--url', gw.url];
    const first = await run([...args, '--vector-index', 'rebuild']);
    expect(first.stderr).toMatch(/\[#+\.*\] +\d+% {2}25\/61 lines {2}ETA /);
    expect(first.stderr).toMatch(/building the vector index/);
    expect(first.stdout).toMatch(/accepted 60 {2}partial 0 {2}duplicate 0 {2}rejected 1/);
    expect(first.stdout).toMatch(/vector index rebuilt once after the load \(built in /);
    expect(first.stdout).toMatch(/line 61: not JSON.*\(BAD_USER_INPUT\)/);
    expect(first.status).toBe(1);
    const chunks = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chunks WHERE namespace = 'bulk-url' AND embedding IS NOT NULL`,
    );
    expect(chunks.rows[0]!.n).toBe(60);

    const again = await run(args);
    expect(again.stdout).toMatch(/accepted 0 {2}partial 0 {2}duplicate 60 {2}rejected 1/);
    expect(again.stdout).toMatch(/vector index kept live \(ready\)/);
  }, 300_000);

  it('refuses --vector-index without --bulk', async () => {
    const res = await run(['x.jsonl', '--namespace', 'n', '--vector-index', 'keep']);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/--vector-index needs --bulk/);
  });
});
