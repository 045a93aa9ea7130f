import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL } from '../../src/auth/principal.js';
import { parseImportLine } from '../../src/modules/portability/import-service.js';
import { importJsonl } from '../../src/cli/local-import.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { onNativePostgres, openFromTemplate, TEST_EMBEDDING } from '../helpers/test-database.js';

const obs = (i: number, extra: Record<string, unknown> = {}) => ({
  source: { system: 'chat', stream: 'room-1', externalId: `m${i}` },
  kind: 'message',
  occurredAt: `2024-03-01T10:00:${String(i).padStart(2, '0')}Z`,
  actor: { type: 'person', id: 'alice' },
  content: `alice: message number ${i}`,
  ...extra,
});

const lines = (items: unknown[]) =>
  Readable.from(items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n'));

describe('import: JSON Lines through the write services', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('tells documents from observations and turns DateTime strings into instants', () => {
    expect(parseImportLine(JSON.stringify({ key: 'k', title: 't', content: 'c' }))).toMatchObject({
      type: 'document',
    });
    const o = parseImportLine(
      JSON.stringify(
        obs(1, {
          assertions: [
            { fact: { subject: 'a', predicate: 'p', object: 'b', validFrom: '2024-01-01T00:00:00Z' } },
          ],
        }),
      ),
    );
    expect(o.type).toBe('observation');
    const value = (
      o as unknown as { value: { occurredAt: Date; assertions: { fact: { validFrom: Date } }[] } }
    ).value;
    expect(value.occurredAt).toEqual(new Date('2024-03-01T10:00:01Z'));
    expect(value.assertions[0]!.fact.validFrom).toEqual(new Date('2024-01-01T00:00:00Z'));
    expect(
      parseImportLine('{"key": "k", "title": "t", "content": "c", "source": {"system": "x"}}').type,
    ).toBe('observation');
    expect(parseImportLine('{nope')).toMatchObject({ type: 'error', code: 'BAD_USER_INPUT' });
    expect(parseImportLine('[1]')).toMatchObject({ type: 'error' });
    expect(parseImportLine(JSON.stringify(obs(1, { occurredAt: '2024-03-01 10:00' })))).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/occurredAt/),
    });
  });

  it('imports a mixed file in batches, reports per-line rejections, and a second run changes nothing', async () => {
    const items: unknown[] = [
      ...Array.from({ length: 6 }, (_, i) => obs(i)),
      // Lines 7–9 form one batch: its observations are written first, so the document's link
      // reaches person:alice, which the observation on line 8 creates.
      {
        key: 'doc:guide',
        title: 'Guide',
        content: '# Guide\n\nHow alice works.',
        links: ['person:alice', 'doc:none'],
      },
      obs(21, {
        assertions: [{ entity: { key: 'person:alice', kind: 'person', title: 'Alice' } }],
      }),
      obs(6),
      '',
      '{not json',
      obs(20, { kind: 'Bad Kind' }),
      { title: 'no key', content: 'x' },
      { key: 'doc:empty', title: 'Empty', content: '   ' },
    ];
    const progress: number[] = [];
    const first = await importJsonl(gw.app.deps, LOCAL_PRINCIPAL, lines(items), {
      namespace: 'imp',
      batchSize: 3,
      onProgress: (s) => progress.push(s.lines),
    });
    expect(first).toMatchObject({
      lines: 13,
      observations: 9,
      documents: 2,
      accepted: 9,
      duplicate: 0,
      rejected: 4,
    });
    expect(first.statuses).toEqual({ CREATED: 9, REJECTED: 4 });
    // In line order, although lines 11 and 13 fail parsing before line 12's batch is written.
    expect(first.reasons).toHaveLength(4);
    expect(first.reasons[0]).toMatch(/^line 11: not JSON.*\(BAD_USER_INPUT\)$/);
    expect(first.reasons[1]).toMatch(/^line 12: .*\(INVALID_KIND\)$/);
    expect(first.reasons[2]).toMatch(/^line 13: neither .*\(BAD_USER_INPUT\)$/);
    expect(first.reasons[3]).toMatch(/^line 14: .*content.*\(BAD_USER_INPUT\)$/);
    expect(progress.length).toBeGreaterThanOrEqual(3);

    const count = async (sql: string) => Number((await gw.db.query<{ n: number }>(sql)).rows[0]!.n);
    expect(await count(`SELECT count(*)::int AS n FROM observations WHERE namespace = 'imp'`)).toBe(8);
    // The observation of the last batch created person:alice before the batch's document was linked.
    const link = await gw.db.query<{ object: string }>(
      `SELECT object FROM facts WHERE namespace = 'imp' AND subject = 'doc:guide' AND predicate = 'LINKS_TO'`,
    );
    expect(link.rows).toEqual([{ object: 'person:alice' }]);

    const again = await importJsonl(gw.app.deps, LOCAL_PRINCIPAL, lines(items), {
      namespace: 'imp',
      batchSize: 500,
    });
    expect(again).toMatchObject({ accepted: 0, duplicate: 9, rejected: 4 });
    expect(again.statuses).toEqual({ DUPLICATE: 8, UNCHANGED: 1, REJECTED: 4 });
    expect(await count(`SELECT count(*)::int AS n FROM observations WHERE namespace = 'imp'`)).toBe(8);
  });

  it('keeps only the first reasons', async () => {
    const bad = Array.from({ length: 12 }, (_, i) => `{bad ${i}`);
    const summary = await importJsonl(gw.app.deps, LOCAL_PRINCIPAL, lines(bad), { namespace: 'imp2' });
    expect(summary.rejected).toBe(12);
    expect(summary.reasons.map((r) => r.split(':')[0])).toEqual(
      Array.from({ length: 10 }, (_, i) => `line ${i + 1}`),
    );
  });
});

// The command itself, end to end, on an embedded database of its own (seeded from the PGlite
// template, so embedded pass only; the service underneath runs on both passes above).
describe.skipIf(onNativePostgres)('memgate import (the command)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-import-'));
  // Start from the migrated template instead of paying for initdb in the child.
  beforeAll(async () => {
    const db = await openFromTemplate(join(dir, 'data', 'pgdata'));
    await db.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Asynchronous on purpose: a blocked worker loses its connection to the test runner.
  const run = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
        env: {
          ...process.env,
          MEMGATE_DATA_DIR: join(dir, 'data'),
          MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
          MEMGATE_LOG_LEVEL: 'warn',
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  it('imports a file, prints a summary, and exits 1 when a line was rejected', async () => {
    const file = join(dir, 'in.jsonl');
    writeFileSync(
      file,
      [obs(1), obs(2), { key: 'doc:a', title: 'A', content: 'Text.' }, '{bad']
        .map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
        .join('\n'),
    );
    const res = await run(['import', file, '--namespace', 'cli', '--batch', '2']);
    expect(res.stdout).toMatch(/accepted 3 {2}partial 0 {2}duplicate 0 {2}rejected 1/);
    expect(res.stdout).toMatch(
      /rejected lines \(1\), not written:\n {2}line 4: not JSON.*\(BAD_USER_INPUT\)\n/,
    );
    expect(res.status).toBe(1);
    const again = await run(['import', file, '--namespace', 'cli']);
    expect(again.stdout).toMatch(/accepted 0 {2}partial 0 {2}duplicate 3 {2}rejected 1/);
  }, 420_000);

  it('explains its usage', async () => {
    const res = await run(['import', 'x.jsonl']);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/--namespace is required/);
  });
});
