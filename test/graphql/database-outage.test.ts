import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GqlResponse, type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { type LiveChange, readUntil, sleep, subscribe, untilListening } from '../helpers/live.js';

/**
 * A database outage seen through the gateway's HTTP interface, on native PostgreSQL: every
 * connection of the gateway's database is terminated and none may open for a few seconds (as
 * in a restart or a failover). Requests meanwhile answer UNAVAILABLE (HTTP 503, retryable),
 * the pool and the LISTEN connection come back by themselves, and /readyz and /metrics say
 * where the listener is. An embedded database (PGlite) has no connection to lose.
 */
const native = Boolean(process.env.DATABASE_URL);

let gw: TestGateway;
let admin: pg.Client;
let database: string;

beforeAll(async () => {
  if (!native) return;
  gw = await startTestGateway({ MEMGATE_METRICS: '1' });
  database = new URL((gw.db as { url?: string }).url!).pathname.slice(1);
  admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
});
afterAll(async () => {
  if (!native) return;
  await admin?.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`).catch(() => undefined);
  await admin?.end();
  await gw?.close();
});

const base = () => gw.url.replace(/\/graphql$/, '');
const terminate = (filter = '') =>
  admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = $1 AND pid <> pg_backend_pid() ${filter}`,
    [database],
  );

/** No connection to the gateway's database for `ms`: the ones open are cut, new ones refused. */
async function outage(ms: number, during: () => Promise<void> = async () => {}): Promise<void> {
  await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
  try {
    await terminate();
    const until = Date.now() + ms;
    await during();
    await sleep(Math.max(0, until - Date.now()));
  } finally {
    await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
  }
}

const upsert = (entities: unknown[]) =>
  gw.gql<{ upsertEntities: { accepted: number } }>(
    'mutation($e: [EntityInput!]!) { upsertEntities(namespace: "acme", entities: $e) { accepted } }',
    { e: entities },
  );

/**
 * `send` again while it answers plain UNAVAILABLE, as a client retries: a pooled connection cut
 * a moment ago may take the first statement before the pool has heard of its loss.
 */
async function retriedWhileCut<T extends GqlResponse>(send: () => Promise<T>): Promise<T> {
  let answer = await send();
  for (let i = 0; i < 10 && answer.status === 503 && !answer.errors?.[0]?.extensions?.reason; i++) {
    await sleep(100);
    answer = await send();
  }
  return answer;
}

async function readiness(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base()}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function metric(name: string): Promise<number | undefined> {
  const text = await (await fetch(`${base()}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe.skipIf(!native)(
  'a database outage (native PostgreSQL only: PGlite has no connection to lose)',
  () => {
    it('requests answer UNAVAILABLE with HTTP 503 meanwhile, and succeed after it without a restart', async () => {
      expect((await upsert([{ key: 'before', kind: 'note' }])).data).toEqual({
        upsertEntities: { accepted: 1 },
      });
      await outage(2000, async () => {
        const write = await upsert([{ key: 'during', kind: 'note' }]);
        expect(write.status).toBe(503);
        expect(write.errors?.[0]?.extensions).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
        expect(JSON.stringify(write)).not.toMatch(/INTERNAL|Connection terminated|accepting connections/);
        const read = await gw.gql('{ entity(namespace: "acme", key: "before") { key } }');
        expect(read.status).toBe(503);
        expect(read.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
        expect((await readiness()).status).toBe(503);
      });
      const after = await upsert([{ key: 'after', kind: 'note' }]);
      expect(after.errors).toBeUndefined();
      expect(after.data).toEqual({ upsertEntities: { accepted: 1 } });
    });

    it('a write reaching a server that accepts none (a demoted primary) answers UNAVAILABLE, READ_ONLY', async () => {
      // What a write meets on a primary turned standby: every transaction read-only.
      await admin.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
      try {
        await terminate();
        const write = await retriedWhileCut(() => upsert([{ key: 'refused', kind: 'note' }]));
        expect(write.status).toBe(503);
        expect(write.errors?.[0]?.extensions).toMatchObject({
          code: 'UNAVAILABLE',
          reason: 'READ_ONLY',
          retryable: true,
        });
        expect(JSON.stringify(write)).not.toMatch(/INTERNAL|read-only transaction/);
        // Reads still answer.
        const read = await gw.gql('{ entity(namespace: "acme", key: "before") { key } }');
        expect(read.errors).toBeUndefined();
      } finally {
        await admin.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
        await terminate();
      }
      expect((await retriedWhileCut(() => upsert([{ key: 'accepted-again', kind: 'note' }]))).data).toEqual({
        upsertEntities: { accepted: 1 },
      });
    });

    it('a write whose connection is cut under it answers UNAVAILABLE, never INTERNAL_SERVER_ERROR', async () => {
      const answers: { status: number; code?: unknown }[] = [];
      for (let attempt = 0; attempt < 20 && !answers.some((a) => a.status === 503); attempt++) {
        const entities = Array.from({ length: 1000 }, (_, i) => ({
          key: `cut-${attempt}-${i}`,
          kind: 'note',
          title: `row ${i} ${'x'.repeat(200)}`,
        }));
        const pending = upsert(entities);
        // Cut the gateway's busy backends while the write runs.
        for (let i = 0; i < 40; i++) {
          const { rowCount } = await terminate(`AND application_name = 'memgate' AND state <> 'idle'`);
          if (rowCount) break;
          await sleep(5);
        }
        const answer = await pending;
        answers.push({ status: answer.status, code: answer.errors?.[0]?.extensions?.code });
      }
      for (const answer of answers) {
        expect([200, 503]).toContain(answer.status);
        if (answer.status === 503) expect(answer.code).toBe('UNAVAILABLE');
      }
      expect(answers.some((a) => a.status === 503)).toBe(true);
      expect((await upsert([{ key: 'after-cut', kind: 'note' }])).data).toEqual({
        upsertEntities: { accepted: 1 },
      });
    }, 120_000);

    it('the LISTEN connection comes back: subscribers hear writes again; /readyz and /metrics report it', async () => {
      const live = subscribe('sse', gw.url, 'unused', { ns: 'acme', kinds: ['ENTITY'] });
      await untilListening(live, async (n) => {
        await upsert([{ key: 'ping', kind: 'probe', title: `ping ${n}` }]);
      });
      // Subscribers hear writes by the outbox poll too, so the listener may come up after them.
      for (let i = 0; i < 100 && (await metric('memgate_db_listener_up')) !== 1; i++) await sleep(100);
      expect(await metric('memgate_db_listener_up')).toBe(1);
      const reconnectsBefore = (await metric('memgate_db_listener_reconnects')) ?? 0;

      await outage(3000, async () => {
        await sleep(500);
        expect(await metric('memgate_db_listener_up')).toBe(0);
      });
      // Back once the listener is: /readyz waits for it.
      let ready = await readiness();
      for (let i = 0; i < 200 && ready.status !== 200; i++) {
        await sleep(100);
        ready = await readiness();
      }
      expect(ready).toMatchObject({ status: 200, body: { status: 'ready', listener: { listening: true } } });
      expect(await metric('memgate_db_listener_up')).toBe(1);
      expect(await metric('memgate_db_listener_reconnects')).toBeGreaterThan(reconnectsBefore);

      for (let i = 0; i < 5; i++) await upsert([{ key: `heard-${i}`, kind: 'note' }]);
      const heard = await Promise.race([
        readUntil(live, 'heard-4'),
        sleep(20_000).then((): LiveChange[] => []),
      ]);
      await live.return?.();
      expect(heard.map((c) => c.key).filter((k) => k.startsWith('heard-'))).toEqual([
        'heard-0',
        'heard-1',
        'heard-2',
        'heard-3',
        'heard-4',
      ]);
    }, 60_000);
  },
);
