import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const UPSERT = /* GraphQL */ `
  mutation($ns: String!, $entities: [EntityInput!]!) {
    upsertEntities(namespace: $ns, entities: $entities) { accepted results { status code message } }
  }
`;
const RECORD = /* GraphQL */ `
  mutation($ns: String!, $obs: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $obs) { accepted results { status assertions { status } } }
  }
`;
const ENTITY = /* GraphQL */ `
  query($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) { title attributes }
  }
`;

describe('an update keeps the fields it omits', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const upsert = async (ns: string, entities: unknown[]) => {
    const res = await gw.gql<{ upsertEntities: { accepted: number } }>(UPSERT, { ns, entities });
    expect(res.errors).toBeUndefined();
    expect(res.data!.upsertEntities.accepted).toBe(entities.length);
  };
  const entity = async (ns: string, key: string) => {
    const res = await gw.gql<{ entity: { title: string; attributes: Record<string, unknown> } | null }>(
      ENTITY,
      { ns, key },
    );
    expect(res.errors).toBeUndefined();
    return res.data!.entity;
  };

  it('upsertEntities without a title keeps the title, in a batch and item by item', async () => {
    const ns = 'omitted-batch';
    await upsert(ns, [{ key: 'acme', kind: 'company', title: 'Acme Corporation' }]);
    await upsert(ns, [{ key: 'acme', kind: 'company', attributes: { plan: 'pro' } }]);
    expect(await entity(ns, 'acme')).toEqual({ title: 'Acme Corporation', attributes: { plan: 'pro' } });
    // Two writes of one key in one batch: the second omits the title the first set.
    await upsert(ns, [
      { key: 'globex', kind: 'company', title: 'Globex Inc.' },
      { key: 'globex', kind: 'company', attributes: { plan: 'free' } },
    ]);
    expect((await entity(ns, 'globex'))!.title).toBe('Globex Inc.');
    // A new entity without a title is titled by its key.
    await upsert(ns, [{ key: 'initech', kind: 'company' }]);
    expect((await entity(ns, 'initech'))!.title).toBe('initech');
  });

  it('the attribute version an untitled update opens carries the title too', async () => {
    const ns = 'omitted-versions';
    await upsert(ns, [
      { key: 'acme', kind: 'company', title: 'Acme Corporation', validFrom: '2024-01-01T00:00:00Z' },
    ]);
    await upsert(ns, [
      { key: 'acme', kind: 'company', attributes: { plan: 'pro' }, validFrom: '2024-06-01T00:00:00Z' },
    ]);
    const versions = await gw.db.query<{ title: string }>(
      `SELECT title FROM entity_versions WHERE namespace = $1 AND key = 'acme' ORDER BY valid_from`,
      [ns],
    );
    expect(versions.rows.map((r) => r.title)).toEqual(['Acme Corporation', 'Acme Corporation']);
  });

  it('in a strict namespace (written item by item) the title is kept as well', async () => {
    const ns = 'omitted-strict';
    const pack = { name: 'omitted', version: '1', kinds: [{ kind: 'company' }] };
    expect(
      (await gw.gql(`mutation($p: JSON!) { registerDomainPack(pack: $p) }`, { p: pack })).errors,
    ).toBeUndefined();
    const configured = await gw.gql(
      `mutation { configureNamespace(namespace: "${ns}", packs: ["omitted@1"], strict: true) }`,
    );
    expect(configured.errors).toBeUndefined();
    await upsert(ns, [{ key: 'acme', kind: 'company', title: 'Acme Corporation' }]);
    await upsert(ns, [{ key: 'acme', kind: 'company', attributes: { plan: 'pro' } }]);
    expect((await entity(ns, 'acme'))!.title).toBe('Acme Corporation');
  });

  it('an entity assertion without a title keeps the title', async () => {
    const ns = 'omitted-assertions';
    const observe = async (n: number, entity: Record<string, unknown>) => {
      const res = await gw.gql<{ recordObservations: { accepted: number } }>(RECORD, {
        ns,
        obs: [
          {
            source: { system: 'crm', externalId: `evt-${n}` },
            kind: 'person.updated',
            occurredAt: `2024-0${n}-01T00:00:00Z`,
            content: `update ${n}`,
            assertions: [{ entity }],
          },
        ],
      });
      expect(res.errors).toBeUndefined();
      expect(res.data!.recordObservations.accepted).toBe(1);
    };
    await observe(1, { key: 'priya', kind: 'person', title: 'Priya Shah' });
    await observe(2, { key: 'priya', kind: 'person', attributes: { team: 'search' } });
    expect(await entity(ns, 'priya')).toEqual({ title: 'Priya Shah', attributes: { team: 'search' } });
  });
});
