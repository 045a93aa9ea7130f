import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import { cliOk as ok } from '../helpers/cli.js';
import { openFromTemplate, openTestDatabase, TEST_EMBEDDING } from '../helpers/test-database.js';

/**
 * `memgate export --checksum` digests memory, not the indexes derived from it: records written by
 * `memgate import`, then `memgate reindex` re-deriving every vector, and the digests printed
 * before and after are the same — each step a CLI process of its own, as an operator runs them.
 */

const dir = mkdtempSync(join(tmpdir(), 'memgate-reindex-checksum-'));

/** Where the CLI processes find the database, and a way for the test to look inside. */
let env: Record<string, string>;
let open: () => Promise<Database>;
let cleanup: () => Promise<void> = async () => undefined;

/** Turns of one conversation: the write path embeds each with its neighbours, reindex alone. */
function turn(i: number): string {
  return JSON.stringify({
    source: { system: 'chat', stream: 's1', externalId: `t${i}` },
    kind: 'message',
    occurredAt: new Date(Date.UTC(2024, 2, 1, 10, i)).toISOString(),
    actor: { type: 'person', id: 'alice' },
    content: `Alice says the rollout of service ${i % 3} moves to week ${10 + i}`,
    assertions: [
      { entity: { key: 'alice', kind: 'person', title: 'Alice' } },
      { fact: { subject: 'alice', predicate: 'owns', object: `svc-${i % 3}` } },
    ],
  });
}

const vectors = async (): Promise<string[]> => {
  const db = await open();
  try {
    const { rows } = await db.query<{ v: string }>(
      `SELECT embedding::text AS v FROM chunks ORDER BY chunk_id`,
    );
    return rows.map((r) => r.v);
  } finally {
    await db.close();
  }
};

beforeAll(async () => {
  const common = { MEMGATE_EMBEDDER: TEST_EMBEDDING.model };
  if (process.env.DATABASE_URL) {
    const db = await openTestDatabase();
    const url = db.url!;
    env = { ...common, DATABASE_URL: url };
    open = () => openPostgres({ connectionString: url, statementTimeoutMs: 30_000 });
    cleanup = () => db.close();
  } else {
    const dataDir = join(dir, 'data');
    const seed = await openFromTemplate(join(dataDir, 'pgdata'));
    await seed.close();
    env = { ...common, MEMGATE_DATA_DIR: dataDir };
    open = () => openPglite({ dataDir: join(dataDir, 'pgdata') });
  }
}, 120_000);

afterAll(async () => {
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('memgate export --checksum across memgate reindex', () => {
  it('prints the same digests after a reindex of the same records, and other digests after a change', async () => {
    const file = join(dir, 'turns.jsonl');
    writeFileSync(file, `${Array.from({ length: 12 }, (_, i) => turn(i)).join('\n')}\n`);
    expect(await ok(['import', file, '--namespace', 'c'], env)).toMatch(/accepted 12 .*rejected 0/);

    const before = await ok(['export', '--checksum', '--namespace', 'c'], env);
    expect(before).toMatch(/^[0-9a-f]{16,}\s+c\s+\d+ records\n$/);
    const vectorsBefore = await vectors();

    expect(await ok(['reindex'], env)).toMatch(/reindexed \d+ chunks/);
    // The derived index did change: otherwise equal digests would prove nothing.
    expect(await vectors()).not.toEqual(vectorsBefore);
    expect(await ok(['export', '--checksum', '--namespace', 'c'], env)).toBe(before);

    // A change of memory itself still changes the digest.
    const more = join(dir, 'more.jsonl');
    writeFileSync(more, `${turn(12)}\n`);
    await ok(['import', more, '--namespace', 'c'], env);
    expect(await ok(['export', '--checksum', '--namespace', 'c'], env)).not.toBe(before);
  }, 300_000);
});
