import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factId } from '../../src/domain/ids.js';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const PAYLOAD = 'accepted rejected results { index status id key code message }';
const ASSERT = `mutation($ns: String!, $facts: [FactInput!]!) { assertFacts(namespace: $ns, facts: $facts) { ${PAYLOAD} } }`;
const SUPERSEDE = `mutation($ns: String!, $id: String!, $by: FactInput!) { supersedeFact(namespace: $ns, factId: $id, by: $by) { ${PAYLOAD} } }`;
const RETRACT = `mutation($ns: String!, $id: String!, $reason: String!) { retractFact(namespace: $ns, factId: $id, reason: $reason) { ${PAYLOAD} } }`;
const RECORD = `mutation($ns: String!, $obs: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $obs) { ${PAYLOAD} } }`;
const FACT_FIELDS = `
  factId predicate validFrom validTo evidence confidence status statusReason conflict
  subject { key placeholder } object { key }
  conflictsWith { factId } supersedes { factId status } supersededBy { factId validFrom }
  observations { observationId }`;
const FACT = `query($id: ID!) { node(id: $id) { ... on Fact { ${FACT_FIELDS} } } }`;

interface WriteResult {
  index: number;
  status: string;
  id: string | null;
  key: string | null;
  code: string | null;
  message: string | null;
}
interface Payload {
  accepted: number;
  rejected: number;
  results: WriteResult[];
}
type Fact = Record<string, unknown> & {
  factId: string;
  status: string;
  conflict: boolean;
  confidence: number;
  conflictsWith: { factId: string }[];
};

describe('facts over HTTP: assert, reinforce, supersede, retract, conflicts', () => {
  let gw: TestGateway;
  const ns = 'facts-test';

  const mutate = async (
    query: string,
    variables: Record<string, unknown>,
    field: string,
  ): Promise<Payload> => {
    const res = await gw.gql<Record<string, Payload>>(query, { ns, ...variables });
    expect(res.errors).toBeUndefined();
    return res.data![field]!;
  };
  const assertFacts = (facts: unknown[]) => mutate(ASSERT, { facts }, 'assertFacts');
  /** Evidence must be a recorded observation: one per name, its id by name. */
  const evidence = async (...names: string[]): Promise<Record<string, string>> => {
    const payload = await mutate(
      RECORD,
      {
        obs: names.map((name) => ({
          source: { system: 'facts-test', externalId: name },
          kind: 'note',
          occurredAt: '2024-01-01T00:00:00Z',
          content: `evidence ${name}`,
        })),
      },
      'recordObservations',
    );
    return Object.fromEntries(names.map((name, i) => [name, payload.results[i]!.key!]));
  };
  const fact = async (id: string): Promise<Fact> => {
    const res = await gw.gql<{ node: Fact }>(FACT, { id: globalId('Fact', ns, id) });
    expect(res.errors).toBeUndefined();
    return res.data!.node;
  };
  const totals = async () => {
    const { rows } = await gw.db.query<{ facts: number; entities: number; conf: number; obs: number }>(
      `SELECT (SELECT count(*) FROM facts WHERE namespace = $1)::int AS facts,
              (SELECT count(*) FROM entities WHERE namespace = $1)::int AS entities,
              (SELECT coalesce(sum(confidence), 0) FROM facts WHERE namespace = $1)::float8 AS conf,
              (SELECT coalesce(sum(cardinality(observation_ids)), 0) FROM facts WHERE namespace = $1)::int AS obs`,
      [ns],
    );
    return rows[0];
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    await gw.db.query(
      `INSERT INTO namespace_settings (namespace, single_valued_predicates) VALUES ($1, ARRAY['LIVES_IN', 'STATUS'])`,
      [ns],
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('creates facts with deterministic ids and placeholder endpoints; a bad item is rejected alone', async () => {
    const payload = await assertFacts([
      {
        subject: 'person:alice',
        predicate: 'WORKS_ON',
        object: 'project:alpha',
        validFrom: '2024-01-01T00:00:00Z',
        confidence: 0.6,
      },
      {
        subject: 'person:alice',
        predicate: 'KNOWS',
        object: 'person:bob',
        validFrom: '2024-02-01T00:00:00Z',
        validTo: '2024-01-01T00:00:00Z',
      },
      { subject: 'person:alice', predicate: 'KNOWS', object: 'person:carol' },
    ]);
    expect(payload.results.map((r) => r.status)).toEqual(['CREATED', 'REJECTED', 'CREATED']);
    expect(payload.results[1]!.code).toBe('BAD_USER_INPUT');
    const expected = factId(
      ns,
      'person:alice',
      'WORKS_ON',
      'project:alpha',
      new Date('2024-01-01T00:00:00Z'),
    );
    expect(payload.results[0]!.key).toBe(expected);
    expect(payload.results[0]!.id).toBe(globalId('Fact', ns, expected));
    const f = await fact(expected);
    expect(f).toMatchObject({
      status: 'ACTIVE',
      evidence: 'ASSERTED',
      confidence: 0.6,
      validFrom: '2024-01-01T00:00:00.000Z',
      validTo: null,
      subject: { key: 'person:alice', placeholder: true },
      object: { key: 'project:alpha' },
    });
  });

  it('the same batch twice leaves every count and confidence unchanged (REINFORCED, with or without validFrom)', async () => {
    const obs = await evidence('obs-1');
    const batch = [
      { subject: 'svc:a', predicate: 'CALLS', object: 'svc:b', confidence: 0.5 },
      {
        subject: 'svc:a',
        predicate: 'OWNED_BY',
        object: 'team:x',
        validFrom: '2023-01-01T00:00:00Z',
        observationIds: [obs['obs-1']],
      },
    ];
    const first = await assertFacts(batch);
    expect(first.results.map((r) => r.status)).toEqual(['CREATED', 'CREATED']);
    const before = await totals();
    const second = await assertFacts(batch);
    expect(second.results.map((r) => r.status)).toEqual(['REINFORCED', 'REINFORCED']);
    expect(second.results.map((r) => r.key)).toEqual(first.results.map((r) => r.key));
    expect(await totals()).toEqual(before);
  });

  it('concurrent assertions of one new fact converge on one edge with every observation id', async () => {
    const base = {
      subject: 'svc:race',
      predicate: 'DEPENDS_ON',
      object: 'svc:db',
      validFrom: '2024-01-01T00:00:00Z',
    };
    const obs = await evidence('obs-r1', 'obs-r2', 'obs-r3', 'obs-r4', 'obs-r5');
    const payloads = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        assertFacts([{ ...base, observationIds: [obs[`obs-r${n}`]], confidence: n / 10 }]),
      ),
    );
    const statuses = payloads.map((p) => p.results[0]!.status).sort();
    expect(statuses).toEqual(['CREATED', 'REINFORCED', 'REINFORCED', 'REINFORCED', 'REINFORCED']);
    const { rows } = await gw.db.query<{ ids: string[]; confidence: number }>(
      `SELECT observation_ids AS ids, confidence FROM facts WHERE namespace = $1 AND subject = 'svc:race'`,
      [ns],
    );
    expect(rows).toHaveLength(1);
    expect([...rows[0]!.ids].sort()).toEqual(Object.values(obs).sort());
    expect(rows[0]!.confidence).toBeCloseTo(0.5);
  });

  it('reinforcement appends observation ids once, raises confidence to the max, keeps the stronger evidence', async () => {
    const base = {
      subject: 'person:dan',
      predicate: 'USES',
      object: 'tool:vim',
      validFrom: '2024-01-01T00:00:00Z',
    };
    const obs = await evidence('obs-a', 'obs-b');
    const [created] = (
      await assertFacts([{ ...base, observationIds: [obs['obs-a']], confidence: 0.5, evidence: 'EXTRACTED' }])
    ).results;
    const again = await assertFacts([
      { ...base, observationIds: [obs['obs-b']], confidence: 0.8, evidence: 'INFERRED' },
      { ...base, observationIds: [obs['obs-a']], confidence: 0.3, evidence: 'ASSERTED' },
    ]);
    expect(again.results.map((r) => r.status)).toEqual(['REINFORCED', 'REINFORCED']);
    const { rows } = await gw.db.query<{ ids: string[]; confidence: number; evidence: string }>(
      `SELECT observation_ids AS ids, confidence, evidence FROM facts WHERE namespace = $1 AND fact_id = $2`,
      [ns, created!.key],
    );
    expect(rows[0]!.ids).toEqual([obs['obs-a'], obs['obs-b']]);
    expect(rows[0]!.confidence).toBeCloseTo(0.8);
    expect(rows[0]!.evidence).toBe('ASSERTED');
    const { rows: all } = await gw.db.query(
      `SELECT 1 FROM facts WHERE namespace = $1 AND subject = 'person:dan'`,
      [ns],
    );
    expect(all).toHaveLength(1);
  });

  it('observations reinforce the fact in force instead of adding edges', async () => {
    const obs = (n: number, day: string) => ({
      source: { system: 'hr', externalId: `e-${n}` },
      kind: 'person.seen',
      occurredAt: `2024-0${day}T00:00:00Z`,
      assertions: [
        { fact: { subject: 'person:erin', predicate: 'MEMBER_OF', object: 'team:y', confidence: n / 10 } },
      ],
    });
    const a = await mutate(RECORD, { obs: [obs(3, '3-01')] }, 'recordObservations');
    const b = await mutate(RECORD, { obs: [obs(6, '4-01')] }, 'recordObservations');
    const { rows } = await gw.db.query<{ ids: string[]; confidence: number; validFrom: Date }>(
      `SELECT observation_ids AS ids, confidence, valid_from AS "validFrom" FROM facts
       WHERE namespace = $1 AND subject = 'person:erin'`,
      [ns],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.ids).toEqual([a.results[0]!.key, b.results[0]!.key]);
    expect(rows[0]!.confidence).toBeCloseTo(0.6);
    expect(new Date(rows[0]!.validFrom).toISOString()).toBe('2024-03-01T00:00:00.000Z');
  });

  it('supersession closes the old fact at the new validFrom and links both; history stays readable', async () => {
    const [old] = (
      await assertFacts([
        {
          subject: 'person:fay',
          predicate: 'WORKS_ON',
          object: 'project:alpha',
          validFrom: '2024-01-01T00:00:00Z',
        },
      ])
    ).results;
    const by = {
      subject: 'person:fay',
      predicate: 'WORKS_ON',
      object: 'project:beta',
      validFrom: '2024-06-01T00:00:00Z',
    };
    const payload = await mutate(SUPERSEDE, { id: old!.key, by }, 'supersedeFact');
    expect(payload.results).toHaveLength(1);
    expect(payload.results[0]).toMatchObject({ status: 'CREATED', code: null });
    const successorId = payload.results[0]!.key!;
    const before = await fact(old!.key!);
    expect(before).toMatchObject({
      status: 'SUPERSEDED',
      validFrom: '2024-01-01T00:00:00.000Z',
      validTo: '2024-06-01T00:00:00.000Z',
      supersededBy: { factId: successorId, validFrom: '2024-06-01T00:00:00.000Z' },
    });
    const after = await fact(successorId);
    expect(after).toMatchObject({
      status: 'ACTIVE',
      validTo: null,
      supersedes: { factId: old!.key, status: 'SUPERSEDED' },
    });
    // Repeating the same supersession changes nothing; another one on a superseded fact is a conflict.
    const again = await mutate(SUPERSEDE, { id: old!.key, by }, 'supersedeFact');
    expect(again.results[0]).toMatchObject({ status: 'UNCHANGED', key: successorId });
    const other = await mutate(
      SUPERSEDE,
      { id: old!.key, by: { ...by, object: 'project:gamma' } },
      'supersedeFact',
    );
    expect(other.results[0]).toMatchObject({ status: 'REJECTED', code: 'CONFLICT' });
    const early = await mutate(
      SUPERSEDE,
      { id: successorId, by: { ...by, object: 'project:delta', validFrom: '2023-01-01T00:00:00Z' } },
      'supersedeFact',
    );
    expect(early.results[0]).toMatchObject({ status: 'REJECTED', code: 'BAD_USER_INPUT' });
    expect(await fact(successorId)).toMatchObject({ status: 'ACTIVE', validTo: null });
  });

  it('an unknown factId is a REJECTED item with code NOT_FOUND', async () => {
    const missing = 'fact-ffffffffffffffffffffffff';
    const s = await mutate(
      SUPERSEDE,
      { id: missing, by: { subject: 'a', predicate: 'P', object: 'b' } },
      'supersedeFact',
    );
    expect(s).toMatchObject({
      accepted: 0,
      rejected: 1,
      results: [{ status: 'REJECTED', code: 'NOT_FOUND' }],
    });
    const r = await mutate(RETRACT, { id: missing, reason: 'wrong' }, 'retractFact');
    expect(r).toMatchObject({
      accepted: 0,
      rejected: 1,
      results: [{ status: 'REJECTED', code: 'NOT_FOUND' }],
    });
  });

  it('retraction keeps the fact, ends its validity and stores the reason', async () => {
    const [f] = (
      await assertFacts([
        { subject: 'person:gus', predicate: 'LIKES', object: 'food:tea', validFrom: '2024-01-01T00:00:00Z' },
      ])
    ).results;
    const payload = await mutate(RETRACT, { id: f!.key, reason: 'entered by mistake' }, 'retractFact');
    expect(payload.results[0]).toMatchObject({ status: 'UPDATED', key: f!.key });
    const row = await fact(f!.key!);
    expect(row).toMatchObject({ status: 'RETRACTED', statusReason: 'entered by mistake' });
    expect(Math.abs(Date.parse(row.validTo as string) - Date.now())).toBeLessThan(60_000);
    const again = await mutate(RETRACT, { id: f!.key, reason: 'again' }, 'retractFact');
    expect(again.results[0]!.status).toBe('UNCHANGED');
    // Re-asserting a retracted fact does not reopen it.
    const re = await assertFacts([
      { subject: 'person:gus', predicate: 'LIKES', object: 'food:tea', validFrom: '2024-01-01T00:00:00Z' },
    ]);
    expect(re.results[0]).toMatchObject({ status: 'UNCHANGED', key: f!.key });
    expect((await fact(f!.key!)).status).toBe('RETRACTED');
  });

  it('flags overlapping values of a single-valued predicate on both facts', async () => {
    const payload = await assertFacts([
      {
        subject: 'person:hal',
        predicate: 'LIVES_IN',
        object: 'city:paris',
        validFrom: '2024-01-01T00:00:00Z',
      },
      {
        subject: 'person:hal',
        predicate: 'LIVES_IN',
        object: 'city:berlin',
        validFrom: '2024-03-01T00:00:00Z',
      },
    ]);
    const [paris, berlin] = payload.results.map((r) => r.key!);
    expect(payload.results[1]!.message).toMatch(paris!);
    const p = await fact(paris!);
    const b = await fact(berlin!);
    expect(p).toMatchObject({ conflict: true, status: 'ACTIVE', conflictsWith: [{ factId: berlin }] });
    expect(b).toMatchObject({ conflict: true, status: 'ACTIVE', conflictsWith: [{ factId: paris }] });
  });

  it('does not flag touching intervals, the same object, or multi-valued predicates', async () => {
    const payload = await assertFacts([
      {
        subject: 'person:ivy',
        predicate: 'LIVES_IN',
        object: 'city:rome',
        validFrom: '2020-01-01T00:00:00Z',
        validTo: '2021-01-01T00:00:00Z',
      },
      {
        subject: 'person:ivy',
        predicate: 'LIVES_IN',
        object: 'city:oslo',
        validFrom: '2021-01-01T00:00:00Z',
      },
      {
        subject: 'person:ivy',
        predicate: 'LIVES_IN',
        object: 'city:oslo',
        validFrom: '2022-01-01T00:00:00Z',
      },
      { subject: 'person:ivy', predicate: 'VISITED', object: 'city:rome', validFrom: '2020-01-01T00:00:00Z' },
      { subject: 'person:ivy', predicate: 'VISITED', object: 'city:lima', validFrom: '2020-01-01T00:00:00Z' },
    ]);
    expect(payload.results.map((r) => r.status)).toEqual([
      'CREATED',
      'CREATED',
      'CREATED',
      'CREATED',
      'CREATED',
    ]);
    for (const r of payload.results) expect((await fact(r.key!)).conflict).toBe(false);
  });

  it('marks explicit contradictions on both facts; retracting one resolves the other', async () => {
    const [a] = (
      await assertFacts([
        { subject: 'svc:db', predicate: 'HEALTH', object: 'state:ok', validFrom: '2024-05-01T00:00:00Z' },
      ])
    ).results;
    const [b] = (
      await assertFacts([
        {
          subject: 'svc:db',
          predicate: 'HEALTH',
          object: 'state:degraded',
          validFrom: '2024-05-01T00:00:00Z',
          attributes: { contradicts: a!.key },
        },
      ])
    ).results;
    expect((await fact(a!.key!)).conflictsWith).toEqual([{ factId: b!.key }]);
    expect(await fact(b!.key!)).toMatchObject({ conflict: true, conflictsWith: [{ factId: a!.key }] });
    await mutate(RETRACT, { id: b!.key, reason: 'false alarm' }, 'retractFact');
    expect(await fact(a!.key!)).toMatchObject({ conflict: false, conflictsWith: [] });
    const unknown = await assertFacts([
      {
        subject: 'svc:db',
        predicate: 'HEALTH',
        object: 'state:down',
        attributes: { contradicts: 'fact-000000000000000000000001' },
      },
    ]);
    expect(unknown.results[0]).toMatchObject({ status: 'REJECTED', code: 'NOT_FOUND' });
  });
});
