import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import { moveNames } from '../../src/modules/portability/index.js';
import { cli } from '../helpers/cli.js';
import { sharedSetup, withClient } from '../helpers/cluster-env.js';
import { withDatabase } from '../helpers/test-database.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { type SeededIds, readAll, sampleReads, seedMemory } from '../helpers/seed-memory.js';

/**
 * `memgate move --namespace` between two real PostgreSQL servers, through the CLI in a child
 * process, with gateways serving both sides over HTTP: DATABASE_URL is a server with
 * wal_level = logical (the source), MEMGATE_TEST_OTHER_URL another server (the target), as
 * scripts/with-cluster.sh exports them. Each server gets a fresh database of its own.
 */
const SOURCE_SERVER = process.env.DATABASE_URL;
const TARGET_SERVER = process.env.MEMGATE_TEST_OTHER_URL;

const suffix = randomBytes(4).toString('hex');
const dbName = `memgate_nsmove_${suffix}`;

async function rows<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  return withClient(url, async (c) => (await c.query(text, values)).rows as R[]);
}

const sourceUrl = () => withDatabase(SOURCE_SERVER!, dbName);
const targetUrl = () => withDatabase(TARGET_SERVER!, dbName);

/**
 * A conversation per namespace: enough chunks for BM25 statistics and vectors to matter. Turn i
 * carries i filler words, so no two chunks have the same length and no two BM25 scores tie
 * exactly: the lexical score is a float sum whose order of addition follows the plan, so the
 * order of exactly tied chunks may differ between any two copies of a database (the report of
 * this branch says more), and this test is about what the move carries over.
 */
async function recordTurns(gw: TestGateway, namespace: string, n: number, topic: string): Promise<void> {
  const words = [
    'invoice',
    'refund',
    'checkout',
    'latency',
    'deploy',
    'rollback',
    'billing',
    'ledger',
    'retry',
  ];
  const observations = Array.from({ length: n }, (_, i) => ({
    kind: 'message',
    source: { system: 'chat', stream: `${topic}-session-${i % 4}`, externalId: `${topic}-${i}` },
    occurredAt: new Date(Date.UTC(2024, 2, 1, 9, i)).toISOString(),
    actor: { type: 'user', id: `user-${i % 3}` },
    content: `${topic} turn ${i}: the ${words[i % words.length]} of ${words[(i * 5) % words.length]} failed with ERR_${topic.toUpperCase()}_${i % 7}; ${words[(i * 2) % words.length]} again${' note'.repeat(i)}`,
  }));
  const res = await gw.gql<{ recordObservations: { accepted: number; rejected: number } }>(
    `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { accepted rejected } }`,
    { ns: namespace, o: observations },
  );
  if (res.errors?.length || res.data!.recordObservations.rejected > 0) throw new Error(JSON.stringify(res));
}

/** Reads of a namespace whose raw bodies must be equal on the source before and the target after. */
function searchReads(namespace: string): string[] {
  const queries = ['billing refund failed', 'rollback latency', 'ERR_ACME_3 checkout', 'who owns billing?'];
  return queries.flatMap((q) =>
    ['LEXICAL', 'VECTOR', 'HYBRID'].map(
      (mode) =>
        `{ search(input: { namespaces: [${JSON.stringify(namespace)}], query: ${JSON.stringify(q)}, mode: ${mode}, k: 10 }) { hits { score channels { channel rank } chunk { id text } } context } }`,
    ),
  );
}

/** Response bodies without `extensions` (the SQL timings of each request). */
async function reads(gw: TestGateway, queries: readonly string[]): Promise<string[]> {
  return (await readAll(gw, queries)).map((body) => {
    const { extensions: _, ...rest } = JSON.parse(body) as Record<string, unknown>;
    return JSON.stringify(rest);
  });
}

/** Subscriptions of this database (pg_subscription is a catalog of the whole server). */
const SUBSCRIPTIONS_HERE =
  'SELECT subname FROM pg_subscription WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())';

async function slotsAndPublications(url: string): Promise<string[]> {
  const found = await rows<{ name: string }>(
    url,
    // This database's slots: under scripts/with-cluster.sh the server also has its replica's.
    `SELECT 'slot ' || slot_name AS name FROM pg_replication_slots WHERE database = current_database()
     UNION ALL SELECT 'publication ' || pubname FROM pg_publication`,
  );
  return found.map((r) => r.name);
}

/**
 * What a failed run may leave, dropped so that the databases can go: subscriptions in the
 * target database (detached from their slots), then this database's slots on the source.
 */
async function dropReplicationLeftovers(): Promise<void> {
  await withClient(targetUrl(), async (c) => {
    for (const { subname } of (await c.query(SUBSCRIPTIONS_HERE)).rows as { subname: string }[]) {
      await c.query(`ALTER SUBSCRIPTION "${subname}" DISABLE`);
      await c.query(`ALTER SUBSCRIPTION "${subname}" SET (slot_name = NONE)`);
      await c.query(`DROP SUBSCRIPTION "${subname}"`);
    }
  }).catch(() => undefined);
  await withClient(SOURCE_SERVER!, (c) =>
    c.query(
      `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`,
      [dbName],
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  await withClient(SOURCE_SERVER!, (c) =>
    c.query(
      `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active`,
      [dbName],
    ),
  );
}

async function checksum(url: string, namespace: string): Promise<string> {
  const res = await cli(['export', '--namespace', namespace, '--checksum'], { DATABASE_URL: url });
  if (res.code !== 0) throw new Error(`export --checksum exited ${res.code}: ${res.stderr}`);
  return res.stdout.trim();
}

describe('memgate move --namespace: one namespace to another server by logical replication', () => {
  let sourceDb: Database;
  let source: TestGateway;
  let ids: SeededIds;
  const before: Record<string, string[]> = {};
  const checksBefore: Record<string, string> = {};

  /**
   * What an undone move of `ns` leaves: no replication object on either side, none of its rows
   * on the target (`copiedRows` selects some), no fence on the source, the source's copy as it was.
   */
  const expectUndone = async (ns: string, copiedRows: string) => {
    expect(await slotsAndPublications(sourceUrl())).toEqual([]);
    expect(await rows(targetUrl(), SUBSCRIPTIONS_HERE)).toEqual([]);
    expect(await rows(targetUrl(), copiedRows)).toEqual([]);
    expect(
      await rows(sourceUrl(), 'SELECT tgname FROM pg_trigger WHERE tgname LIKE $1', [
        `${moveNames(ns, dbName).fence}%`,
      ]),
    ).toEqual([]);
    expect(await checksum(sourceUrl(), ns)).toBe(checksBefore[ns]);
  };

  // Set up by the first test and shared by the rest: a failed set-up fails every test.
  const setup = sharedSetup(setUp);
  const ready = () => setup.get();

  async function setUp(): Promise<void> {
    if (!SOURCE_SERVER || !TARGET_SERVER) {
      throw new Error(
        'test/cluster needs two PostgreSQL servers: DATABASE_URL (wal_level = logical) and MEMGATE_TEST_OTHER_URL. ' +
          'Run it as `scripts/with-cluster.sh npm run test:cluster`, or export both by hand.',
      );
    }
    for (const server of [SOURCE_SERVER, TARGET_SERVER]) {
      await withClient(server, (c) => c.query(`CREATE DATABASE ${dbName}`));
    }
    sourceDb = await openPostgres({ connectionString: sourceUrl(), statementTimeoutMs: 60_000 });
    source = await startTestGateway({}, { db: sourceDb });
    ids = await seedMemory(source);
    await recordTurns(source, 'acme', 120, 'acme');
    await recordTurns(source, 'beta', 40, 'beta');
    await recordTurns(source, 'gamma', 30, 'gamma');
    for (const ns of ['acme', 'beta', 'gamma']) {
      before[ns] = await reads(source, searchReads(ns));
      checksBefore[ns] = await checksum(sourceUrl(), ns);
    }
    before.sample = await reads(source, acmeSampleReads());
  }

  afterAll(async () => {
    await setup.ifStarted();
    await source?.close();
    if (SOURCE_SERVER && TARGET_SERVER) await dropReplicationLeftovers();
    for (const server of [SOURCE_SERVER, TARGET_SERVER]) {
      if (!server) continue;
      // A leftover subscription would keep the database busy; a failed test may leave one.
      await withClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    }
  });

  const acmeSampleReads = () => sampleReads(ids).filter((q) => !q.includes('"beta"'));

  it('refuses a source without wal_level = logical, changing nothing', async () => {
    await ready();
    // The other server serves as a source here: scripts/with-cluster.sh starts it with the
    // default wal_level = replica.
    const [other] = await rows<{ wal_level: string }>(targetUrl(), 'SHOW wal_level');
    expect(other!.wal_level).toBe('replica');
    const res = await cli(['move', '--namespace', 'acme', '--to', sourceUrl()], {
      DATABASE_URL: targetUrl(),
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `wal_level = ${other!.wal_level}; a namespace move needs wal_level = logical`,
    );
    expect(await slotsAndPublications(sourceUrl())).toEqual([]);
  }, 120_000);

  it('refuses with a clear message and a non-zero exit: absent namespace, unreachable target, bad name', async () => {
    await ready();
    const absent = await cli(['move', '--namespace', 'nobody', '--to', targetUrl()], {
      DATABASE_URL: sourceUrl(),
    });
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('Namespace "nobody" is absent from the source');

    const unreachable = await cli(
      ['move', '--namespace', 'acme', '--to', 'postgres://memgate:x@127.0.0.1:1/none'],
      {
        DATABASE_URL: sourceUrl(),
      },
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('Cannot reach PostgreSQL');

    const usage = await cli(['move', '--namespace', 'a b', '--to', targetUrl()], {
      DATABASE_URL: sourceUrl(),
    });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--namespace: namespace must be');

    expect(await slotsAndPublications(sourceUrl())).toEqual([]);
    expect(await checksum(sourceUrl(), 'acme')).toBe(checksBefore.acme);
  }, 120_000);

  it('moves gamma while the source serves it, then keeps the source copy read-only', async () => {
    await ready();
    const res = await cli(['move', '--namespace', 'gamma', '--to', targetUrl()], {
      DATABASE_URL: sourceUrl(),
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/move: initial copy: (\d+)\/\1 tables ready/);
    expect(res.stderr).toContain('move: fence: namespace "gamma" is read-only on the source');
    expect(res.stdout).toContain('moved namespace gamma');
    console.log(`gamma move:\n${res.stderr}${res.stdout}`);

    expect(await checksum(targetUrl(), 'gamma')).toBe(checksBefore.gamma);
    expect(await checksum(sourceUrl(), 'gamma')).toBe(checksBefore.gamma);
    expect(await slotsAndPublications(sourceUrl())).toEqual([]);
    expect(await rows(targetUrl(), SUBSCRIPTIONS_HERE)).toEqual([]);

    // The source refuses writes to gamma, whoever writes, and only to gamma.
    const refused = await source.gql<{ upsertEntities: { accepted: number; rejected: number } }>(
      `mutation { upsertEntities(namespace: "gamma", entities: [{ key: "late", kind: "thing", title: "Late" }]) { accepted rejected } }`,
    );
    expect(refused.status).toBe(503);
    expect(refused.errors?.[0]?.message).toContain('namespace "gamma" is being moved, or was moved');
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'UNAVAILABLE',
      reason: 'NAMESPACE_MOVED',
      retryable: false,
    });
    await expect(
      rows(
        sourceUrl(),
        `INSERT INTO entities (namespace, key, kind, title) VALUES ('gamma', 'sql', 'thing', 'SQL')`,
      ),
    ).rejects.toThrow(
      'namespace "gamma" is being moved, or was moved, to another server: it is read-only here',
    );
    expect(await checksum(sourceUrl(), 'gamma')).toBe(checksBefore.gamma);
    const accepted = await source.gql<{ upsertEntities: { accepted: number } }>(
      `mutation { upsertEntities(namespace: "beta", entities: [{ key: "thing:two", kind: "thing", title: "Two" }]) { accepted } }`,
    );
    expect(accepted.data?.upsertEntities.accepted).toBe(1);
    checksBefore.beta = await checksum(sourceUrl(), 'beta');
    before.beta = await reads(source, searchReads('beta'));

    const again = await cli(['move', '--namespace', 'gamma', '--to', targetUrl()], {
      DATABASE_URL: sourceUrl(),
    });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Namespace "gamma" is read-only on the source');
  }, 300_000);

  it('aborts when the digests differ, and leaves the source authoritative with nothing left behind', async () => {
    await ready();
    // The target has another pack under the name and version acme enables: the copied
    // namespace would mean something else there, and acme's digest (which covers its packs) differs.
    await rows(
      targetUrl(),
      `INSERT INTO domain_packs (name, version, body, body_hash) VALUES ('services', '1.0.0', '{"other": true}', 'other')`,
    );
    try {
      const res = await cli(['move', '--namespace', 'acme', '--to', targetUrl()], {
        DATABASE_URL: sourceUrl(),
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('The digests differ');
      expect(res.stderr).toContain(
        "Undone: the replication objects, the fence and the target's partial copy are gone",
      );
    } finally {
      await rows(targetUrl(), `DELETE FROM domain_packs WHERE name = 'services' AND body_hash = 'other'`);
    }
    await expectUndone(
      'acme',
      `SELECT 1 FROM chunks WHERE namespace = 'acme' UNION ALL SELECT 1 FROM audit_log WHERE namespace = 'acme'`,
    );
    expect(await reads(source, searchReads('acme'))).toEqual(before.acme);
  }, 300_000);

  it('undoes a move interrupted by SIGINT during the initial copy', async () => {
    await ready();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'move', '--namespace', 'beta', '--to', targetUrl()],
      {
        env: { ...process.env, DATABASE_URL: sourceUrl(), MEMGATE_LOG_LEVEL: 'warn' },
      },
    );
    let stderr = '';
    let interrupted = false; // once: a second SIGINT exits at once, without undoing
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!interrupted && stderr.includes('move: target: subscription')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(1);
    expect(stderr).toContain('move: SIGINT: undoing the move');
    expect(stderr).toContain('Interrupted.');
    expect(stderr).toContain(
      "Undone: the replication objects, the fence and the target's partial copy are gone",
    );
    await expectUndone(
      'beta',
      `SELECT 1 FROM observations WHERE namespace = 'beta' UNION ALL SELECT 1 FROM chunk_postings WHERE namespace = 'beta'`,
    );
  }, 300_000);

  it('moves acme with --drop-source: equal digests, same reads and rankings on the target, fresh ids, beta untouched', async () => {
    await ready();
    const started = performance.now();
    const res = await cli(['move', '--namespace', 'acme', '--to', targetUrl(), '--drop-source'], {
      DATABASE_URL: sourceUrl(),
    });
    expect(res.code, res.stderr).toBe(0);
    console.log(
      `acme move (${Math.round(performance.now() - started)} ms with the CLI's start):\n${res.stderr}${res.stdout}`,
    );
    expect(res.stderr).toContain('checksum: ');
    expect(res.stdout).toContain('The source no longer holds the namespace');

    expect(await checksum(targetUrl(), 'acme')).toBe(checksBefore.acme);
    expect(await slotsAndPublications(sourceUrl())).toEqual([]);
    const left = await rows<{ n: number }>(
      sourceUrl(),
      `SELECT (SELECT count(*) FROM entities WHERE namespace = 'acme') + (SELECT count(*) FROM chunks WHERE namespace = 'acme')
            + (SELECT count(*) FROM chunk_postings WHERE namespace = 'acme') + (SELECT count(*) FROM audit_log WHERE namespace = 'acme')
            + (SELECT count(*) FROM observations WHERE namespace = 'acme') + (SELECT count(*) FROM facts WHERE namespace = 'acme') AS n`,
    );
    expect(Number(left[0]!.n)).toBe(0);
    const fences = await rows(sourceUrl(), `SELECT tgname FROM pg_trigger WHERE tgname LIKE $1`, [
      `${moveNames('acme', dbName).fence}%`,
    ]);
    expect(fences).toEqual([]);

    // beta never moved: the same digest and the same search answers on the source.
    expect(await checksum(sourceUrl(), 'beta')).toBe(checksBefore.beta);
    expect(await reads(source, searchReads('beta'))).toEqual(before.beta);

    const targetDb = await openPostgres({ connectionString: targetUrl(), statementTimeoutMs: 60_000 });
    const target = await startTestGateway({}, { db: targetDb });
    try {
      expect(await reads(target, acmeSampleReads())).toEqual(before.sample);
      for (const ns of ['acme', 'gamma']) {
        const after = await reads(target, searchReads(ns));
        for (const [i, query] of searchReads(ns).entries()) expect(after[i], query).toEqual(before[ns]![i]);
      }
      await writeOnTarget(target);
    } finally {
      await target.close();
    }
  }, 300_000);

  /** New rows on the target take ids after the copied ones (chunks, audit, arrival): no collision. */
  async function writeOnTarget(target: TestGateway): Promise<void> {
    const maxIds = `SELECT (SELECT max(chunk_id) FROM chunks)::int AS chunk, (SELECT max(audit_id) FROM audit_log)::int AS audit,
                           (SELECT max(arrival) FROM observations)::int AS arrival`;
    const [old] = await rows<{ chunk: number; audit: number; arrival: number }>(targetUrl(), maxIds);
    await recordTurns(target, 'acme', 5, 'after');
    const purged = await target.gql<{ purgeEntity: { accepted: number } }>(
      `mutation { purgeEntity(namespace: "acme", key: "doc:secret", reason: "after the move") { accepted } }`,
    );
    expect(purged.data?.purgeEntity.accepted, JSON.stringify(purged)).toBe(1);
    const doc = await target.gql<{ retainDocuments: { accepted: number; rejected: number } }>(
      `mutation { retainDocuments(namespace: "acme", documents: [{ key: "doc:new", title: "New", content: "Written after the move." }]) { accepted rejected } }`,
    );
    expect(doc.data?.retainDocuments).toEqual({ accepted: 1, rejected: 0 });
    const [now] = await rows<{ chunk: number; audit: number; arrival: number }>(targetUrl(), maxIds);
    expect(now!.chunk).toBeGreaterThan(old!.chunk);
    expect(now!.audit).toBeGreaterThan(old!.audit);
    expect(now!.arrival).toBeGreaterThan(old!.arrival);
    const dupes = await rows(
      targetUrl(),
      `SELECT chunk_id FROM chunks WHERE namespace = 'acme' GROUP BY chunk_id HAVING count(*) > 1`,
    );
    expect(dupes).toEqual([]);
  }
});
