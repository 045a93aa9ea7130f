import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exitOf, killGatewayProcesses, startGatewayProcess } from '../helpers/gateway-process.js';
import type { Database } from '../../src/db/database.js';
import { insertChunks } from '../helpers/postings.js';
import { openFromTemplate, openTestDatabase } from '../helpers/test-database.js';

/**
 * A change of a namespace's text-search language, interrupted by kill -9 of the real gateway
 * process half-way through its re-derivation, is taken up again by the next process on the
 * same database at start, and ends DONE with every chunk in the new language.
 */

const NS = 'crash-ts';
// Enough batches of re-derivation that the kill lands while the run is still going.
const CHUNKS = 40_000;

const STATUS = `{ textSearch(namespace: "${NS}") {
  textSearch configurations { configuration chunks } reindex { state progress done total } } }`;

interface Status {
  textSearch: string;
  configurations: { configuration: string; chunks: number }[];
  reindex: { state: string; progress: number; done: number; total: number } | null;
}

/** Seeds the chunks in the default language, through a connection the test closes again. */
async function seed(db: Database): Promise<void> {
  await db.query(
    `INSERT INTO entities (namespace, key, kind, title)
     SELECT $1, 'n' || i, 'note', 'Заметка ' || i FROM generate_series(1, $2::int) AS i`,
    [NS, CHUNKS],
  );
  await insertChunks(
    db,
    `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text)
     SELECT $1, 'n' || i, 0, 'note', t, t
     FROM generate_series(1, $2::int) AS i, LATERAL (SELECT 'Пропуска для гостей номер ' || i AS t) x`,
    [NS, CHUNKS],
  );
}

/** A database the server processes share: a PGlite data folder, or a native test database. */
async function freshLocation(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const db = await openTestDatabase();
    await seed(db);
    return { env: { DATABASE_URL: db.url! }, cleanup: () => db.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'memgate-ts-crash-'));
  const dataDir = join(dir, 'data');
  const db = await openFromTemplate(join(dataDir, 'pgdata'));
  await seed(db);
  await db.close();
  return {
    env: { MEMGATE_DATA_DIR: dataDir },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function gql<T>(url: string, query: string): Promise<{ data?: T; errors?: unknown[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as { data?: T; errors?: unknown[] };
}

async function status(url: string): Promise<Status> {
  const answer = await gql<{ textSearch: Status }>(url, STATUS);
  expect(answer.errors).toBeUndefined();
  return answer.data!.textSearch;
}

async function waitFor<T>(read: () => Promise<T>, until: (value: T) => boolean, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() - started > 120_000)
      throw new Error(`${what}: not reached; last ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

afterEach(killGatewayProcesses);

describe('kill -9 during a text-search language change', () => {
  it('leaves the run RUNNING part-way; the next gateway process resumes it at start and ends DONE', async () => {
    const location = await freshLocation();
    try {
      const first = await startGatewayProcess(location.env);
      // The mutation answers once the whole namespace is re-derived: it never does here.
      const change = gql(
        first.url,
        `mutation { setTextSearch(namespace: "${NS}", textSearch: "russian") { textSearch } }`,
      );
      change.catch(() => undefined);
      const midway = await waitFor(
        () => status(first.url),
        (s) => s.reindex?.state === 'RUNNING' && s.reindex.done > 0,
        'a re-derivation under way',
      );
      first.child.kill('SIGKILL');
      expect((await exitOf(first.child)).signal).toBe('SIGKILL');
      expect(midway.reindex!.done).toBeLessThan(CHUNKS);

      const second = await startGatewayProcess(location.env);
      const after = await waitFor(
        () => status(second.url),
        (s) => s.reindex?.state !== 'RUNNING',
        'the interrupted re-derivation finished',
      );
      expect(after).toEqual({
        textSearch: 'russian',
        configurations: [{ configuration: 'russian', chunks: CHUNKS }],
        reindex: { state: 'DONE', progress: 1, done: CHUNKS, total: CHUNKS },
      });
      second.child.kill('SIGTERM');
      (await exitOf(second.child)).signal;
    } finally {
      await location.cleanup();
    }
  }, 300_000);
});
