import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres-database.js';
import { clusterEnv, withClient } from '../helpers/cluster-env.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { readUntil, subscribe, untilListening } from '../helpers/live.js';
import { openTestDatabase, withDatabase } from '../helpers/test-database.js';

/**
 * Read replicas (MEMGATE_READ_DATABASE_URLS), under scripts/with-cluster.sh: a primary and its
 * streaming replica. Replay on the replica is paused to make "served by the replica" visible:
 * a row written behind the gateway's back is then missing from its reads.
 */

const RECORD = `mutation Record($ns: String!, $items: [ObservationInput!]!) {
  recordObservations(namespace: $ns, observations: $items) { accepted results { status } }
}`;
const OBSERVATIONS = `query Seen($ns: String!) {
  observations(namespace: $ns, first: 100) { edges { node { content } } }
}`;
const UPSERT = `mutation Upsert($ns: String!, $entities: [EntityInput!]!) {
  upsertEntities(namespace: $ns, entities: $entities) { accepted }
}`;
const CONTEXT = `query Pack($ns: String!, $strategy: ContextStrategy) {
  context(input: { namespaces: [$ns], query: "harbour", strategy: $strategy }) { traceId warnings }
}`;

interface Seen {
  observations: { edges: { node: { content: string } }[] };
}

let written = 0;
/** One observation with `content`, as recordObservations takes it. */
function note(content: string) {
  written += 1;
  return {
    source: { system: 'test', stream: 'replicas', externalId: `n${written}` },
    kind: 'note',
    occurredAt: '2026-12-01T10:00:00Z',
    content,
  };
}

const primaryUrl = () => clusterEnv('MEMGATE_TEST_PRIMARY_URL');

const pauseReplay = (url: string) => withClient(url, (c) => c.query('SELECT pg_wal_replay_pause()'));
const resumeReplay = (url: string) => withClient(url, (c) => c.query('SELECT pg_wal_replay_resume()'));

/** Waits until the replica has replayed everything the primary has written so far. */
async function caughtUp(primary: string, replica: string): Promise<void> {
  const target = await withClient(primary, (c) =>
    c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'),
  );
  const lsn = target.rows[0]!.lsn;
  for (let i = 0; i < 200; i += 1) {
    const done = await withClient(replica, (c) =>
      c.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn]),
    );
    if (done.rows[0]!.ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`replica did not replay ${lsn}`);
}

describe('read replicas', () => {
  let primaryDb: string;
  let replicaDb: string;
  let gw: TestGateway;
  let other: TestGateway;
  const ns = 'harbour';

  const contents = async (g: TestGateway, headers: Record<string, string> = {}) => {
    const res = await g.gql<Seen>(OBSERVATIONS, { ns }, { headers });
    expect(res.errors).toBeUndefined();
    return res.data!.observations.edges.map((e) => e.node.content);
  };
  const gatewayOn = async (readYourWritesMs = '10000') => {
    const db = await openPostgres({
      connectionString: primaryDb,
      statementTimeoutMs: 30_000,
      readUrls: [replicaDb],
    });
    return startTestGateway(
      {
        DATABASE_URL: primaryDb,
        MEMGATE_READ_DATABASE_URLS: replicaDb,
        MEMGATE_READ_YOUR_WRITES_MS: readYourWritesMs,
      },
      { db },
    );
  };

  let fresh: Awaited<ReturnType<typeof openTestDatabase>>;

  beforeAll(async () => {
    const replicaServer = clusterEnv('MEMGATE_TEST_REPLICA_URL');
    // A fresh migrated database on the primary; physical replication brings it to the replica.
    fresh = await openTestDatabase();
    primaryDb = fresh.url!;
    replicaDb = withDatabase(replicaServer, new URL(primaryDb).pathname.slice(1));
    await caughtUp(primaryUrl(), replicaServer);
    gw = await gatewayOn();
    other = await gatewayOn();
    // Replicas are sampled every 200 ms: known before the first read.
    await new Promise((r) => setTimeout(r, 500));
  });

  afterAll(async () => {
    await resumeReplay(clusterEnv('MEMGATE_TEST_REPLICA_URL')).catch(() => undefined);
    await gw?.close();
    await other?.close();
    await fresh?.close();
  });

  it('serves queries from the replica: a row it has not replayed is not read', async () => {
    await pauseReplay(replicaDb);
    try {
      const res = await other.gql(RECORD, { ns, items: [note('written elsewhere')] });
      expect(res.errors).toBeUndefined();
      // `gw` never saw that write: its reads go to the paused replica.
      expect(await contents(gw)).not.toContain('written elsewhere');
    } finally {
      await resumeReplay(replicaDb);
    }
    await caughtUp(primaryDb, replicaDb);
    expect(await contents(gw)).toContain('written elsewhere');
  });

  it("reads a principal's own write at once, and answers the write's commit LSN", async () => {
    await pauseReplay(replicaDb);
    try {
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: RECORD,
          variables: { ns, items: [note('mine at once')] },
        }),
      });
      const body = (await res.json()) as { extensions?: { lsn?: string }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(body.extensions?.lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      expect(res.headers.get('memgate-lsn')).toBe(body.extensions!.lsn);
      expect(await contents(gw)).toContain('mine at once');
      // Another gateway does not know this principal wrote; told the LSN, it reads where it is replayed.
      expect(await contents(other)).not.toContain('mine at once');
      expect(await contents(other, { 'memgate-lsn': body.extensions!.lsn! })).toContain('mine at once');
    } finally {
      await resumeReplay(replicaDb);
    }
  });

  for (const strategy of ['HYBRID', 'AUTO']) {
    it(`writes a context trace on the primary while the pack is read from the replica (${strategy})`, async () => {
      const res = await gw.gql<{ context: { traceId: string; warnings: string[] } }>(CONTEXT, {
        ns,
        strategy,
      });
      expect(res.errors).toBeUndefined();
      expect(res.data!.context.warnings.join(' ')).not.toMatch(/trace/);
      const stored = await withClient(primaryDb, (c) =>
        c.query('SELECT 1 FROM context_traces WHERE trace_id = $1', [res.data!.context.traceId]),
      );
      expect(stored.rowCount).toBeGreaterThan(0);
    });
  }

  it('answers a malformed memgate-lsn header as the caller’s error', async () => {
    const res = await gw.gql(OBSERVATIONS, { ns }, { headers: { 'memgate-lsn': 'yesterday' } });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('retries a read elsewhere when its replica connection is lost', async () => {
    await contents(gw); // the replica pool holds connections now
    await withClient(replicaDb, (c) =>
      c.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'memgate' AND pid <> pg_backend_pid()`,
      ),
    );
    for (let i = 0; i < 5; i += 1) expect(await contents(gw)).toContain('written elsewhere');
  });

  it('delivers every change to a subscriber while the replica lags', async () => {
    const upsert = async (g: TestGateway, key: string) => {
      const res = await g.gql(UPSERT, { ns, entities: [{ key, kind: 'note', title: key }] });
      expect(res.errors).toBeUndefined();
    };
    const live = subscribe('sse', gw.url, 'unused', { ns, kinds: ['ENTITY'] });
    try {
      await untilListening(live, (n) => upsert(other, 'ping').then(() => void n));
      await pauseReplay(replicaDb);
      for (const n of [1, 2, 3]) await upsert(other, `lagging-${n}`);
      const heard = await readUntil(live, 'lagging-3');
      // Each event is re-read where the change is visible: none is dropped as "not found".
      expect(heard.map((c) => [c.key, c.entity?.title])).toEqual([
        ['lagging-1', 'lagging-1'],
        ['lagging-2', 'lagging-2'],
        ['lagging-3', 'lagging-3'],
      ]);
    } finally {
      await live.return?.();
      await resumeReplay(replicaDb);
    }
  });

  it('reports each replica on /readyz and /metrics', async () => {
    await caughtUp(primaryDb, replicaDb);
    await new Promise((r) => setTimeout(r, 300));
    const ready = (await (await fetch(gw.url.replace('/graphql', '/readyz'))).json()) as {
      primary?: string;
      replicas?: { name: string; up: boolean; lagBytes: number | null }[];
    };
    expect(ready.primary).toBe(`127.0.0.1:${new URL(primaryDb).port}${new URL(primaryDb).pathname}`);
    expect(ready.replicas).toHaveLength(1);
    expect(ready.replicas![0]).toMatchObject({ up: true });
    const metrics = await (await fetch(gw.url.replace('/graphql', '/metrics'))).text();
    expect(metrics).toMatch(/memgate_db_replica_up\{replica="127\.0\.0\.1:\d+\/\w+"\} 1/);
    expect(metrics).toMatch(/memgate_db_replica_lag_bytes\{replica=/);
  });
});

describe('a gateway pointed at the wrong server', () => {
  it('refuses to start on a standby', async () => {
    await expect(
      openPostgres({ connectionString: clusterEnv('MEMGATE_TEST_REPLICA_URL'), statementTimeoutMs: 5000 }),
    ).rejects.toThrow(/is a standby in recovery.*MEMGATE_READ_DATABASE_URLS/);
  });

  it('refuses a read URL that is not a replica of the primary', async () => {
    await expect(
      openPostgres({
        connectionString: primaryUrl(),
        statementTimeoutMs: 5000,
        readUrls: [clusterEnv('MEMGATE_TEST_OTHER_URL')],
      }),
    ).rejects.toThrow(/is not a replica of DATABASE_URL/);
  });
});
