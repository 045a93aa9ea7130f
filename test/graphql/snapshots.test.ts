import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { SERVICES_PACK } from './domain-pack-fixture.js';

const RECONCILE = /* GraphQL */ `
  mutation Reconcile($ns: String!, $snapshot: SnapshotInput!) {
    reconcileSnapshot(namespace: $ns, snapshot: $snapshot) {
      namespace snapshotId scope observedAt replayed closedRelations staleEntities
      entities { accepted rejected results { index status key code message } }
      relations { accepted rejected results { index status key code message } }
    }
  }
`;

interface Payload {
  accepted: number;
  rejected: number;
  results: {
    index: number;
    status: string;
    key: string | null;
    code: string | null;
    message: string | null;
  }[];
}
interface Reconciliation {
  namespace: string;
  snapshotId: string;
  scope: string;
  observedAt: string;
  replayed: boolean;
  closedRelations: string[];
  staleEntities: string[];
  entities: Payload;
  relations: Payload;
}

const T1 = '2026-03-01T00:00:00.000Z';
const T2 = '2026-04-01T00:00:00.000Z';
const T3 = '2026-05-01T00:00:00.000Z';

const ep = (method: string, path: string, attributes: Record<string, unknown> = {}) => ({
  key: `endpoint:payments:${method} ${path}`,
  kind: 'endpoint',
  attributes: { method, path, ...attributes },
});
const exposes = (method: string, path: string) => ({
  subject: 'service:payments',
  relation: 'exposes',
  object: `endpoint:payments:${method} ${path}`,
});

const snapshot1 = {
  snapshotId: 'commit-aaa',
  scope: 'service:payments',
  source: 'openapi-sync',
  observedAt: T1,
  entities: [
    { key: 'service:payments', kind: 'service', title: 'Payments', attributes: { tier: 'gold' } },
    ep('GET', '/runs'),
    ep('POST', '/runs', { operationId: 'createRun' }),
    ep('GET', '/legacy'),
  ],
  relations: [exposes('GET', '/runs'), exposes('POST', '/runs'), exposes('GET', '/legacy')],
};

const snapshot2 = {
  ...snapshot1,
  snapshotId: 'commit-bbb',
  observedAt: T2,
  entities: [snapshot1.entities[0], ep('GET', '/runs'), ep('POST', '/runs', { operationId: 'startRun' })],
  relations: [exposes('GET', '/runs'), exposes('POST', '/runs')],
};

describe('snapshot reconciliation over HTTP', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
    const reg = await gw.gql(`mutation($p: JSON!) { registerDomainPack(pack: $p) }`, { p: SERVICES_PACK });
    expect(reg.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const reconcile = async (ns: string, snapshot: unknown) => {
    const res = await gw.gql<{ reconcileSnapshot: Reconciliation }>(RECONCILE, { ns, snapshot });
    expect(res.errors).toBeUndefined();
    return res.data!.reconcileSnapshot;
  };
  const counts = async (ns: string) => {
    const { rows } = await gw.db.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM entities WHERE namespace = $1) AS entities,
              (SELECT count(*)::int FROM entity_versions WHERE namespace = $1) AS versions,
              (SELECT count(*)::int FROM facts WHERE namespace = $1) AS facts,
              (SELECT count(*)::int FROM facts WHERE namespace = $1 AND valid_to IS NOT NULL) AS closed,
              (SELECT count(*)::int FROM entities WHERE namespace = $1 AND stale) AS stale,
              (SELECT count(*)::int FROM audit_log WHERE namespace = $1) AS audit`,
      [ns],
    );
    return rows[0]!;
  };

  it('creates what a first snapshot lists and records the snapshot on it', async () => {
    const r = await reconcile('snap', snapshot1);
    expect(r).toMatchObject({
      snapshotId: 'commit-aaa',
      scope: 'service:payments',
      observedAt: T1,
      replayed: false,
    });
    expect(r.entities.results.map((x) => x.status)).toEqual(['CREATED', 'CREATED', 'CREATED', 'CREATED']);
    expect(r.relations.results.map((x) => x.status)).toEqual(['CREATED', 'CREATED', 'CREATED']);
    expect(r.closedRelations).toEqual([]);
    expect(r.staleEntities).toEqual([]);
    const { rows } = await gw.db.query<{
      key: string;
      snapshot_id: string;
      snapshot_scope: string;
      stale: boolean;
    }>(`SELECT key, snapshot_id, snapshot_scope, stale FROM entities WHERE namespace = 'snap' ORDER BY key`);
    expect(
      rows.every(
        (e) => e.snapshot_id === 'commit-aaa' && e.snapshot_scope === 'service:payments' && !e.stale,
      ),
    ).toBe(true);
    const facts = await gw.db.query<{ snapshot_id: string; valid_from: Date; evidence: string }>(
      `SELECT snapshot_id, valid_from, evidence FROM facts WHERE namespace = 'snap'`,
    );
    expect(facts.rows).toHaveLength(3);
    for (const f of facts.rows) {
      expect(f.snapshot_id).toBe('commit-aaa');
      expect(new Date(f.valid_from).toISOString()).toBe(T1);
      expect(f.evidence).toBe('ASSERTED');
    }
  });

  it('re-sending the same snapshot changes nothing', async () => {
    const before = await counts('snap');
    const r = await reconcile('snap', snapshot1);
    expect(r.replayed).toBe(false);
    expect(r.entities.results.map((x) => x.status)).toEqual([
      'UNCHANGED',
      'UNCHANGED',
      'UNCHANGED',
      'UNCHANGED',
    ]);
    expect(r.relations.results.map((x) => x.status)).toEqual(['UNCHANGED', 'UNCHANGED', 'UNCHANGED']);
    expect(r.closedRelations).toEqual([]);
    expect(r.staleEntities).toEqual([]);
    expect(await counts('snap')).toEqual(before);
  });

  it('a later snapshot closes the relations and stales the entities it no longer lists', async () => {
    const legacy = await gw.db.query<{ fact_id: string }>(
      `SELECT fact_id FROM facts WHERE namespace = 'snap' AND object = 'endpoint:payments:GET /legacy'`,
    );
    const r = await reconcile('snap', snapshot2);
    expect(r.entities.results.map((x) => x.status)).toEqual(['UNCHANGED', 'UNCHANGED', 'UPDATED']);
    expect(r.relations.results.map((x) => x.status)).toEqual(['UNCHANGED', 'UNCHANGED']);
    expect(r.closedRelations).toEqual([legacy.rows[0]!.fact_id]);
    expect(r.staleEntities).toEqual(['endpoint:payments:GET /legacy']);

    const closed = await gw.db.query<{ valid_to: Date; status: string; snapshot_id: string }>(
      `SELECT valid_to, status, snapshot_id FROM facts WHERE namespace = 'snap' AND fact_id = $1`,
      [legacy.rows[0]!.fact_id],
    );
    expect(new Date(closed.rows[0]!.valid_to).toISOString()).toBe(T2);
    expect(closed.rows[0]!.status).toBe('ACTIVE'); // closed, not retracted: history stays
    const stale = await gw.db.query<{ stale: boolean; snapshot_id: string }>(
      `SELECT stale, snapshot_id FROM entities WHERE namespace = 'snap' AND key = 'endpoint:payments:GET /legacy'`,
    );
    expect(stale.rows[0]).toEqual({ stale: true, snapshot_id: 'commit-bbb' });
    const touched = await gw.db.query<{ key: string; snapshot_id: string }>(
      `SELECT key, snapshot_id FROM entities WHERE namespace = 'snap' AND NOT stale ORDER BY key`,
    );
    expect(touched.rows.every((e) => e.snapshot_id === 'commit-bbb')).toBe(true);
    // The replaced attributes opened a new version valid from T2; T1's is kept.
    const versions = await gw.db.query<{
      valid_from: Date;
      valid_to: Date | null;
      attributes: Record<string, unknown>;
    }>(
      `SELECT valid_from, valid_to, attributes FROM entity_versions
       WHERE namespace = 'snap' AND key = 'endpoint:payments:POST /runs' ORDER BY valid_from`,
    );
    expect(
      versions.rows.map((v) => [
        new Date(v.valid_from).toISOString(),
        v.valid_to && new Date(v.valid_to).toISOString(),
        v.attributes.operationId,
      ]),
    ).toEqual([
      [T1, T2, 'createRun'],
      [T2, null, 'startRun'],
    ]);
  });

  it('is idempotent for the later snapshot too, and an older one re-sent is a replay that applies nothing', async () => {
    const before = await counts('snap');
    const again = await reconcile('snap', snapshot2);
    expect(
      [...again.entities.results, ...again.relations.results].every((x) => x.status === 'UNCHANGED'),
    ).toBe(true);
    expect(again.closedRelations).toEqual([]);
    expect(again.staleEntities).toEqual([]);
    const replay = await reconcile('snap', snapshot1);
    expect(replay.replayed).toBe(true);
    expect(
      [...replay.entities.results, ...replay.relations.results].every((x) => x.status === 'UNCHANGED'),
    ).toBe(true);
    expect(replay.entities.results[0]!.message).toBe('already reconciled; superseded by snapshot commit-bbb');
    expect(await counts('snap')).toEqual(before);
  });

  it('a snapshot id is immutable and snapshots of a scope apply in order', async () => {
    const tampered = await gw.gql(RECONCILE, {
      ns: 'snap',
      snapshot: { ...snapshot1, entities: snapshot1.entities.slice(1) },
    });
    expect(tampered.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(tampered.errors?.[0]?.message).toMatch(/already reconciled with another body/);
    const older = await gw.gql(RECONCILE, {
      ns: 'snap',
      snapshot: { ...snapshot2, snapshotId: 'commit-000', observedAt: '2026-03-15T00:00:00Z' },
    });
    expect(older.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(older.errors?.[0]?.message).toMatch(/before the last reconciled snapshot "commit-bbb"/);
  });

  it('listing a dropped item again revives the entity and opens a new relation interval', async () => {
    const r = await reconcile('snap', { ...snapshot1, snapshotId: 'commit-ccc', observedAt: T3 });
    const legacy = r.entities.results.find((x) => x.key === 'endpoint:payments:GET /legacy')!;
    expect(legacy).toMatchObject({ status: 'UPDATED', message: 'no longer stale' });
    expect(r.relations.results.map((x) => x.status)).toEqual(['UNCHANGED', 'UNCHANGED', 'CREATED']);
    const intervals = await gw.db.query<{ valid_from: Date; valid_to: Date | null }>(
      `SELECT valid_from, valid_to FROM facts WHERE namespace = 'snap' AND object = 'endpoint:payments:GET /legacy'
       ORDER BY valid_from`,
    );
    expect(
      intervals.rows.map((f) => [
        new Date(f.valid_from).toISOString(),
        f.valid_to && new Date(f.valid_to).toISOString(),
      ]),
    ).toEqual([
      [T1, T2],
      [T3, null],
    ]);
  });

  it('another scope is reconciled independently', async () => {
    const r = await reconcile('snap', {
      snapshotId: 'b-1',
      scope: 'service:billing',
      observedAt: T3,
      entities: [{ key: 'service:billing', kind: 'service' }],
      relations: [],
    });
    expect(r.staleEntities).toEqual([]);
    expect(r.closedRelations).toEqual([]);
    const stale = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM entities WHERE namespace = 'snap' AND stale`,
    );
    expect(stale.rows[0]!.n).toBe(0);
  });

  it('in strict mode entities and relations are checked; a rejected item stays listed', async () => {
    const conf = await gw.gql(
      `mutation { configureNamespace(namespace: "snap-strict", packs: ["services@1.0.0"], strict: true) }`,
    );
    expect(conf.errors).toBeUndefined();
    const first = await reconcile('snap-strict', {
      snapshotId: 's1',
      scope: 'catalog',
      observedAt: T1,
      entities: [
        { key: 'service:payments', kind: 'service' },
        { key: 'team:core', kind: 'team' },
        ep('GET', '/runs'),
      ],
      relations: [
        exposes('GET', '/runs'),
        { subject: 'service:payments', relation: 'owned_by', object: 'team:core' },
      ],
    });
    expect(first.relations.results.map((x) => x.status)).toEqual(['CREATED', 'CREATED']);
    const second = await reconcile('snap-strict', {
      snapshotId: 's2',
      scope: 'catalog',
      observedAt: T2,
      entities: [
        { key: 'service:payments', kind: 'service' },
        { key: 'team:core', kind: 'gizmo' },
        ep('GET', '/runs'),
      ],
      relations: [
        exposes('GET', '/runs'),
        { subject: 'team:core', relation: 'owned_by', object: 'service:payments' },
        { subject: 'service:payments', relation: 'owned_by', object: 'team:core' },
        { subject: 'service:payments', relation: 'exposes', object: 'team:core' },
      ],
    });
    expect(second.entities.results.map((x) => [x.status, x.code])).toEqual([
      ['UNCHANGED', null],
      ['REJECTED', 'SCHEMA_VIOLATION'],
      ['UNCHANGED', null],
    ]);
    expect(second.entities.results[1]!.message).toMatch(/^strict mode rule kind-declared: kind "gizmo"/);
    expect(second.relations.results.map((x) => x.status)).toEqual([
      'UNCHANGED',
      'REJECTED',
      'UNCHANGED',
      'REJECTED',
    ]);
    expect(second.relations.results[1]!.message).toMatch(
      /relation-from-kinds: .*subject "team:core" is of kind "team"/,
    );
    expect(second.relations.results[3]!.message).toMatch(
      /relation-to-kinds: .*object "team:core" is of kind "team"/,
    );
    expect(second.staleEntities).toEqual([]);
    expect(second.closedRelations).toEqual([]);
  });

  it('rejects a malformed snapshot as a whole and bad items alone', async () => {
    const bad = await gw.gql(RECONCILE, {
      ns: 'snap',
      snapshot: { ...snapshot1, snapshotId: '', observedAt: T3 },
    });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const r = await reconcile('snap-items', {
      snapshotId: 'x',
      scope: 'items',
      observedAt: T1,
      entities: [
        { key: 'a', kind: 'Not A Kind' },
        { key: 'b', kind: 'thing' },
        { key: 'b', kind: 'thing' },
      ],
      relations: [
        { subject: 'b', relation: 'rel', object: 'c' },
        { subject: 'b', relation: 'rel', object: 'c' },
      ],
    });
    expect(r.entities.results.map((x) => x.status)).toEqual(['REJECTED', 'CREATED', 'DUPLICATE']);
    expect(r.relations.results.map((x) => x.status)).toEqual(['CREATED', 'DUPLICATE']);
  });
});
