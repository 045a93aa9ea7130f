import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reindexContext } from '../../src/modules/observations/context-index.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const UPSERT = /* GraphQL */ `
  mutation Upsert($ns: String!, $entities: [EntityInput!]!) {
    upsertEntities(namespace: $ns, entities: $entities) { accepted }
  }
`;

const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $items: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $items) { accepted results { key } }
  }
`;

const OBSERVATIONS_OF = /* GraphQL */ `
  query Of($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) { observations(first: 20) { edges { node { content } } } }
  }
`;

const NS = 'linking';

const message = (id: string, content: string, actor?: string) => ({
  source: { system: 'chat', stream: `thread-${id}`, externalId: id },
  kind: 'message',
  occurredAt: new Date(Date.UTC(2024, 4, 1, 9, Number(id.replace(/\D/g, '')) || 0)).toISOString(),
  content,
  ...(actor ? { actor: { type: 'person', id: actor } } : {}),
});

describe('entity linking at write time: actor, subject and the entities a text names', () => {
  let gw: TestGateway;
  const observationsOf = async (key: string) => {
    const res = await gw.gql<{ entity: { observations: { edges: { node: { content: string } }[] } } }>(
      OBSERVATIONS_OF,
      { ns: NS, key },
    );
    expect(res.errors).toBeUndefined();
    return res.data!.entity.observations.edges.map((e) => e.node.content).sort();
  };
  const mentionRows = async (key: string) => {
    const { rows } = await gw.db.query<{ role: string; evidence: string }>(
      `SELECT role, evidence FROM mentions WHERE namespace = $1 AND entity_key = $2 ORDER BY role`,
      [NS, key],
    );
    return rows;
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    const res = await gw.gql(UPSERT, {
      ns: NS,
      entities: [
        { key: 'alice', kind: 'person', title: 'Alice Moreau' },
        { key: 'bob', kind: 'person', title: 'Bob' },
        { key: 'falcon-x', kind: 'project', title: 'Falcon rewrite' },
        { key: 'ATL-142', kind: 'ticket', title: 'Login latency' },
      ],
    });
    expect(res.errors).toBeUndefined();
    // Aliases come from vault imports; set here as such an import leaves them.
    await gw.db.query(
      `UPDATE entities SET aliases = '{"Project Falcon"}' WHERE namespace = $1 AND key = 'falcon-x'`,
      [NS],
    );
    const written = await gw.gql(RECORD, {
      ns: NS,
      items: [
        message('m1', 'Deployed the fix this morning.', 'alice'),
        message('m2', 'Asked alice moreau about project falcon and ATL-142; it lags 40s.', 'bob'),
        message('m3', 'The bobcat and the falconer met Malice.'),
      ],
    });
    expect(written.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('an entity’s observations hold what it wrote (actor) and where its title is named', async () => {
    expect(await observationsOf('alice')).toEqual([
      'Asked alice moreau about project falcon and ATL-142; it lags 40s.',
      'Deployed the fix this morning.',
    ]);
    expect(await mentionRows('alice')).toEqual([
      { role: 'actor', evidence: 'ASSERTED' },
      { role: 'mention', evidence: 'EXTRACTED' },
    ]);
  });

  it('aliases and plain keys name an entity too; words inside other words do not', async () => {
    expect(await observationsOf('falcon-x')).toEqual([
      'Asked alice moreau about project falcon and ATL-142; it lags 40s.',
    ]);
    expect(await observationsOf('ATL-142')).toEqual([
      'Asked alice moreau about project falcon and ATL-142; it lags 40s.',
    ]);
    // "bobcat" is not Bob; Bob is linked only as the actor of m2.
    expect(await mentionRows('bob')).toEqual([{ role: 'actor', evidence: 'ASSERTED' }]);
  });

  it('an entity created after the observations is linked by reindex', async () => {
    await gw.gql(UPSERT, { ns: NS, entities: [{ key: 'malice', kind: 'person', title: 'Malice' }] });
    expect(await observationsOf('malice')).toEqual([]);
    const result = await reindexContext(gw.db, [NS]);
    expect(result.links).toBe(1);
    expect(await observationsOf('malice')).toEqual(['The bobcat and the falconer met Malice.']);
    expect((await reindexContext(gw.db, [NS])).links).toBe(0);
  });
});
