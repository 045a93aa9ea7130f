import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { clusterEnv, sharedSetup } from '../helpers/cluster-env.js';
import { sleep } from '../helpers/live.js';

/**
 * The servers scripts/with-cluster.sh starts: a primary, its streaming replica and a third
 * server, each with the memgate role (a superuser), its database and the extensions.
 */

let primary: pg.Client;
let replica: pg.Client;
let other: pg.Client;
const table = `cluster_smoke_${randomBytes(4).toString('hex')}`;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Polls `read` until it answers `expected`, for at most `ms`; answers the last value read. */
async function until<T>(read: () => Promise<T>, expected: T, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (value !== expected && Date.now() < deadline) {
    await sleep(50);
    value = await read();
  }
  return value;
}

const rowsOnReplica = async () =>
  Number(
    (await replica.query(`SELECT count(*) AS n FROM ${table}`).catch(() => ({ rows: [{ n: -1 }] }))).rows[0]
      .n,
  );

const servers = sharedSetup(async () => {
  const urls = [
    clusterEnv('MEMGATE_TEST_PRIMARY_URL'),
    clusterEnv('MEMGATE_TEST_REPLICA_URL'),
    clusterEnv('MEMGATE_TEST_OTHER_URL'),
  ];
  [primary, replica, other] = await Promise.all(urls.map(connect));
});
// Each test fails (not skips) when the servers are missing.
beforeEach(() => servers.get());
afterAll(async () => {
  if (!(await servers.ifStarted())) return;
  await replica?.query('SELECT pg_wal_replay_resume()').catch(() => undefined);
  await primary?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
  await Promise.all([primary, replica, other].map((c) => c?.end()));
});

describe('scripts/with-cluster.sh', () => {
  it('DATABASE_URL is the primary, which streams to the replica', async () => {
    expect(process.env.DATABASE_URL).toBe(clusterEnv('MEMGATE_TEST_PRIMARY_URL'));
    const { rows } = await primary.query(
      `SELECT pg_is_in_recovery() AS recovery, current_setting('wal_level') AS wal_level,
              (SELECT count(*)::int FROM pg_stat_replication WHERE state = 'streaming') AS streaming`,
    );
    expect(rows[0]).toEqual({ recovery: false, wal_level: 'logical', streaming: 1 });
  });

  it('the replica is in recovery, read-only, streaming from the primary', async () => {
    const { rows } = await replica.query(
      `SELECT pg_is_in_recovery() AS recovery, current_setting('hot_standby') AS hot_standby,
              (SELECT status FROM pg_stat_wal_receiver) AS receiver`,
    );
    expect(rows[0]).toEqual({ recovery: true, hot_standby: 'on', receiver: 'streaming' });
    await expect(replica.query('CREATE TABLE refused (x int)')).rejects.toThrow(/read-only transaction/);
  });

  it('a row written on the primary arrives on the replica; a paused replay holds it back', async () => {
    await primary.query(`CREATE TABLE ${table} (marker text)`);
    await primary.query(`INSERT INTO ${table} VALUES ('first')`);
    expect(await until(rowsOnReplica, 1, 10_000)).toBe(1);

    // As the memgate role: tests of read-your-writes hold the replica back this way.
    await replica.query('SELECT pg_wal_replay_pause()');
    expect(
      await until(
        async () => (await replica.query('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0].s,
        'paused',
        5_000,
      ),
    ).toBe('paused');
    await primary.query(`INSERT INTO ${table} VALUES ('second')`);
    await sleep(500);
    expect(await rowsOnReplica()).toBe(1);
    await replica.query('SELECT pg_wal_replay_resume()');
    expect(await until(rowsOnReplica, 2, 10_000)).toBe(2);
  });

  it('the other server stands alone, with the role, database, extensions and the default wal_level = replica', async () => {
    const { rows } = await other.query(
      `SELECT pg_is_in_recovery() AS recovery, current_setting('wal_level') AS wal_level,
              (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
              (SELECT array_agg(extname::text ORDER BY extname) FROM pg_extension WHERE extname IN ('vector', 'pg_trgm')) AS extensions,
              current_database() AS database`,
    );
    expect(rows[0]).toEqual({
      recovery: false,
      wal_level: 'replica',
      superuser: true,
      extensions: ['pg_trgm', 'vector'],
      database: new URL(clusterEnv('MEMGATE_TEST_OTHER_URL')).pathname.slice(1),
    });
    const systems = await Promise.all(
      [primary, replica, other].map(
        async (c) =>
          (await c.query('SELECT system_identifier::text AS id FROM pg_control_system()')).rows[0].id,
      ),
    );
    // The replica is a copy of the primary; the other server is a cluster of its own.
    expect(systems[1]).toBe(systems[0]);
    expect(systems[2]).not.toBe(systems[0]);
  });
});
