import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertChunks } from '../helpers/postings.js';
import { onNativePostgres, openFromTemplate, TEST_EMBEDDING } from '../helpers/test-database.js';

// `memgate text-search NAMESPACE CONFIGURATION`, end to end, on an embedded database of its own
// (seeded from the PGlite template, so embedded pass only).
describe.skipIf(onNativePostgres)('memgate text-search (the command)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-text-search-'));
  beforeAll(async () => {
    const db = await openFromTemplate(join(dir, 'data', 'pgdata'));
    await db.query(
      `INSERT INTO entities (namespace, key, kind, title) VALUES ('help-ru', 'a', 'document', 'A'), ('help-ru', 'b', 'document', 'B')`,
    );
    await insertChunks(
      db,
      `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text)
       VALUES ('help-ru', 'a', 0, 'document', 'x', 'Гостевые пропуска'), ('help-ru', 'b', 0, 'document', 'x', 'Корпоративная сеть')`,
    );
    await db.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('re-indexes the namespace and prints where its chunks are', async () => {
    const res = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', 'src/cli.ts', 'text-search', 'help-ru', 'russian'],
          {
            env: {
              ...process.env,
              MEMGATE_DATA_DIR: join(dir, 'data'),
              MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
              MEMGATE_LOG_LEVEL: 'warn',
            },
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      },
    );
    expect(res.stdout).toBe('help-ru: russian (chunks: russian 2)\n');
    // Progress lines are for jobs longer than one interval: this one is done before the first.
    expect(res.stderr).not.toMatch(/error|failed/i);
    expect(res.status).toBe(0);
  }, 300_000);
});
