import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite-database.js';
import { cli } from '../helpers/cli.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { TEST_EMBEDDING, openTestDatabase, pgliteTemplatePath } from '../helpers/test-database.js';

/**
 * What `memgate import` says about the lines it could not take whole: each by its line number
 * in the file and the field at fault, PARTIAL lines counted and listed with their rejected
 * assertions, and none of the GraphQL request it sends with `--url` showing through. The
 * command runs in a child process, into its own database (an embedded folder on the PGlite
 * pass, a fresh PostgreSQL database on the native one) and through a gateway (`--url`).
 */
const obs = (i: number, extra: Record<string, unknown> = {}) => ({
  source: { system: 'chat', stream: 'report', externalId: `r${i}` },
  kind: 'message',
  occurredAt: `2024-03-01T10:00:${String(i).padStart(2, '0')}Z`,
  content: `note number ${i}`,
  ...extra,
});

const LINES: unknown[] = [
  obs(1),
  // line 2: stored, one of its two assertions refused
  obs(2, {
    assertions: [
      { entity: { key: 'person:carol', kind: 'person' } },
      { entity: { key: 'person:dave', kind: 'Bad Kind' } },
    ],
  }),
  // line 3: a date that is no date
  obs(3, {
    assertions: [{ fact: { subject: 'a', predicate: 'KNOWS', object: 'b', validFrom: 'yesterday' } }],
  }),
  // line 4: a number where text belongs
  obs(4, { kind: 5 }),
  '',
  // line 6: a document dated with a DateTime string
  {
    key: 'doc:dated',
    title: 'Dated',
    content: 'Written on a known day.',
    occurredAt: '2024-02-01T09:00:00Z',
  },
  // line 7: not JSON
  '{broken',
];

function expectHonestReport(stdout: string): void {
  expect(stdout).toMatch(/accepted 2 {2}partial 1 {2}duplicate 0 {2}rejected 3/);
  expect(stdout).toContain('rejected lines (3), not written:');
  expect(stdout).toContain(
    'line 3: assertions[0].fact.validFrom: expected an ISO-8601 date-time, got "yesterday" (BAD_USER_INPUT)',
  );
  expect(stdout).toMatch(/\n {2}line 4: kind: .*string.* \(BAD_USER_INPUT\)\n/i);
  expect(stdout).toMatch(/\n {2}line 7: not JSON.* \(BAD_USER_INPUT\)\n/);
  expect(stdout).toContain('partial lines (1), stored, with part of each rejected:');
  expect(stdout).toMatch(/\n {2}line 2: assertions\[1\]\.entity\.kind: .+ \(BAD_USER_INPUT\)\n/);
  // Lines 1 and 6 went in whole: neither is listed.
  expect(stdout).not.toMatch(/line [16]:/);
  for (const internal of ['Variable', '$items', 'items[', 'Invalid observation']) {
    expect(stdout).not.toContain(internal);
  }
}

describe('memgate import: the report of the lines it could not take whole', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-import-report-'));
  const file = join(dir, 'lines.jsonl');
  let env: Record<string, string>;
  let closeDatabase = async () => {};
  let gw: TestGateway;

  beforeAll(async () => {
    writeFileSync(file, `${LINES.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
    const base = { MEMGATE_EMBEDDER: TEST_EMBEDDING.model };
    if (process.env.DATABASE_URL) {
      const db = await openTestDatabase();
      env = { ...base, DATABASE_URL: db.url! };
      closeDatabase = () => db.close();
    } else {
      // Started from the migrated template instead of paying for initdb in the child.
      const seeded = await openPglite({
        dataDir: join(dir, 'data', 'pgdata'),
        loadDataDir: new Blob([readFileSync(pgliteTemplatePath())]),
      });
      await seeded.close();
      env = { ...base, MEMGATE_DATA_DIR: join(dir, 'data') };
    }
    gw = await startTestGateway();
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await closeDatabase();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names each line and field, lists the PARTIAL line, and exits 1 (local database)', async () => {
    const res = await cli(['import', file, '--namespace', 'report', '--batch', '3'], env);
    expect(res.code, res.stderr).toBe(1);
    expectHonestReport(res.stdout);
  }, 300_000);

  it('says the same through a running gateway (--url), where lines arrive as GraphQL variables', async () => {
    const res = await cli(['import', file, '--namespace', 'report-url', '--batch', '3', '--url', gw.url]);
    expect(res.code, res.stderr).toBe(1);
    expectHonestReport(res.stdout);
  }, 300_000);

  it('names a field the input type does not have (--url), without the request around it', async () => {
    const unknown = join(dir, 'unknown-field.jsonl');
    writeFileSync(
      unknown,
      `${JSON.stringify(obs(10))}\n${JSON.stringify(obs(11, { facts: [{ subject: 'a', predicate: 'P', object: 'b' }] }))}\n`,
    );
    const res = await cli(['import', unknown, '--namespace', 'report-unknown', '--url', gw.url]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toMatch(/accepted 1 {2}partial 0 {2}duplicate 0 {2}rejected 1/);
    expect(res.stdout).toMatch(/\n {2}line 2: facts: not a field of ObservationInput.* \(BAD_USER_INPUT\)\n/);
    expect(res.stdout).not.toContain('Variable');
  }, 300_000);
});
