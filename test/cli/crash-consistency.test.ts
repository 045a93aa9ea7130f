import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import { openFromTemplate, openTestDatabase, TEST_EMBEDDING } from '../helpers/test-database.js';

/**
 * kill -9 in the middle of an import, online batches and the bulk path alike: a real child
 * process is SIGKILLed once its first batch has committed, the database is opened again (PGlite
 * replays its WAL; the stale folder lock is taken over) and every observation is either whole
 * (node, chunks, postings, statistics, mentions, facts, final status) or absent. Re-running the
 * same file completes the import and, for the bulk path, the vector index.
 */

const N = 600;
const BATCH = 100;

function line(i: number): string {
  const base = {
    source: { system: 'crash', stream: `s${i % 7}`, externalId: `c${i}` },
    kind: 'message',
    occurredAt: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    actor: { type: 'person', id: `p${i % 13}` },
    content: `p${i % 13}: incident ${i} on service s${i % 17}, latency raised and rolled back`,
  };
  // Every third observation asserts an entity and a fact (the online projection path).
  if (i % 3 !== 0) return JSON.stringify(base);
  return JSON.stringify({
    ...base,
    assertions: [
      { entity: { key: `svc-${i % 17}`, kind: 'service', title: `Service ${i % 17}` } },
      { fact: { subject: `p${i % 13}`, predicate: 'touched', object: `svc-${i % 17}` } },
    ],
  });
}

interface Location {
  env: Record<string, string>;
  open(): Promise<Database>;
  cleanup(): Promise<void>;
}

async function freshLocation(): Promise<Location> {
  if (process.env.DATABASE_URL) {
    const db = await openTestDatabase();
    const url = db.url!;
    return {
      env: { DATABASE_URL: url },
      open: () => openPostgres({ connectionString: url, statementTimeoutMs: 30_000 }),
      cleanup: () => db.close(),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'memgate-crash-'));
  const dataDir = join(dir, 'data');
  const seed = await openFromTemplate(join(dataDir, 'pgdata'));
  await seed.close();
  return {
    env: { MEMGATE_DATA_DIR: dataDir },
    open: () => openPglite({ dataDir: join(dataDir, 'pgdata') }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function startImport(args: string[], env: Record<string, string>): ChildProcess {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
    MEMGATE_LOG_LEVEL: 'warn',
    MEMGATE_PROGRESS_MS: '0',
    ...env,
  };
  if (!env.DATABASE_URL) delete childEnv.DATABASE_URL;
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'import', ...args], { env: childEnv });
}

/** Resolves once the child reports `lines` written, then SIGKILLs it; resolves to its exit signal. */
function killAfter(child: ChildProcess, lines: number): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    let seen = '';
    let sent = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const done = [...seen.matchAll(/ (\d+)\/\d+ lines| (\d+) lines /g)].map((m) => Number(m[1] ?? m[2]));
      if (!sent && done.some((n) => n >= lines)) {
        sent = true;
        // A moment into the next batch, so the kill lands inside its work.
        setTimeout(() => child.kill('SIGKILL'), 30);
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (!sent) reject(new Error(`import ended (code ${code}) before it could be killed:\n${seen}`));
      else resolve(signal);
    });
  });
}

function finish(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every observation of `ns` is whole; answers how many there are. */
async function assertWhole(db: Database, ns: string): Promise<number> {
  const { rows } = await db.query<{
    total: number;
    unfinished: number;
    without_node: number;
    without_chunks: number;
    chunks_without_postings: number;
    projected_without_facts: number;
    projected_without_mentions: number;
  }>(
    `WITH o AS (SELECT * FROM observations WHERE namespace = $1)
     SELECT
       (SELECT count(*)::int FROM o) AS total,
       (SELECT count(*)::int FROM o WHERE status <> 'PROCESSED') AS unfinished,
       (SELECT count(*)::int FROM o WHERE NOT EXISTS (
          SELECT 1 FROM entities e WHERE e.namespace = $1 AND e.key = o.observation_id AND e.kind = 'observation')) AS without_node,
       (SELECT count(*)::int FROM o WHERE NOT EXISTS (
          SELECT 1 FROM chunks c WHERE c.namespace = $1 AND c.observation_id = o.observation_id)) AS without_chunks,
       (SELECT count(*)::int FROM chunks c WHERE c.namespace = $1 AND NOT EXISTS (
          SELECT 1 FROM chunk_postings p WHERE p.namespace = $1 AND p.chunk_id = c.chunk_id)) AS chunks_without_postings,
       (SELECT count(*)::int FROM o WHERE o.source_external_id ~ '^c[0-9]+$'
          AND substring(o.source_external_id FROM 2)::int % 3 = 0 AND NOT EXISTS (
          SELECT 1 FROM facts f WHERE f.namespace = $1 AND o.observation_id = ANY(f.observation_ids))) AS projected_without_facts,
       (SELECT count(*)::int FROM o WHERE substring(o.source_external_id FROM 2)::int % 3 = 0 AND NOT EXISTS (
          SELECT 1 FROM mentions m WHERE m.namespace = $1 AND m.observation_id = o.observation_id)) AS projected_without_mentions`,
    [ns],
  );
  expect(rows[0]).toEqual({
    total: rows[0]!.total,
    unfinished: 0,
    without_node: 0,
    without_chunks: 0,
    chunks_without_postings: 0,
    projected_without_facts: 0,
    projected_without_mentions: 0,
  });
  // The BM25 statistics moved in the same transactions as the chunks they count.
  const stats = await db.query<{ docs: number; chunks: number }>(
    `SELECT coalesce((SELECT sum(doc_count)::int FROM lexical_stats WHERE namespace = $1), 0) AS docs,
            (SELECT count(*)::int FROM chunks WHERE namespace = $1) AS chunks`,
    [ns],
  );
  expect(stats.rows[0]!.docs).toBe(stats.rows[0]!.chunks);
  return rows[0]!.total;
}

describe('kill -9 during an import leaves whole observations and a clean restart', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'memgate-crash-file-'));
    file = join(dir, 'events.jsonl');
    writeFileSync(file, `${Array.from({ length: N }, (_, i) => line(i)).join('\n')}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const mode of ['online', 'bulk'] as const) {
    it(`${mode} batches`, async () => {
      const location = await freshLocation();
      try {
        const args = [file, '--namespace', 'crash', '--batch', String(BATCH)];
        if (mode === 'bulk') args.push('--bulk', '--vector-index', 'rebuild');
        const signal = await killAfter(startImport(args, location.env), BATCH);
        expect(signal).toBe('SIGKILL');

        let db = await location.open();
        try {
          const present = await assertWhole(db, 'crash');
          expect(present).toBeGreaterThanOrEqual(BATCH);
          expect(present).toBeLessThan(N);
        } finally {
          await db.close();
        }

        const rerun = await finish(startImport(args, location.env));
        expect(rerun.code, rerun.stderr).toBe(0);
        expect(rerun.stdout).toMatch(/rejected 0/);
        db = await location.open();
        try {
          expect(await assertWhole(db, 'crash')).toBe(N);
          const index = await db.query<{ valid: boolean }>(
            `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             WHERE c.relname = 'chunks_embedding_idx'`,
          );
          expect(index.rows).toEqual([{ valid: true }]);
          const vectors = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM chunks WHERE namespace = 'crash' AND embedding IS NULL`,
          );
          expect(vectors.rows[0]!.n).toBe(0);
        } finally {
          await db.close();
        }
      } finally {
        await location.cleanup();
      }
    }, 300_000);
  }
});
