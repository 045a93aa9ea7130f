import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { at, seedEntities, seedFacts } from '../helpers/seed-graph.js';

const NS = 'paths';
const T0 = at('2023-01-01T00:00:00Z');

function principalFrom(request: Request): Principal {
  const scope = request.headers.get('x-principal');
  return {
    id: scope ?? 'local',
    read: ['*'],
    write: ['*'],
    scopes: scope ? [scope] : null,
    pii: true,
    admin: !scope,
  };
}

const PATHS = /* GraphQL */ `
  query Paths($ns: String!, $from: String!, $to: String!, $maxHops: Int, $asOf: DateTime, $limit: Int) {
    paths(namespace: $ns, from: $from, to: $to, maxHops: $maxHops, asOf: $asOf, limit: $limit) {
      length
      entities { key namespace }
      facts { factId subject { key } predicate object { key } }
    }
  }
`;

type Path = {
  length: number;
  entities: { key: string; namespace: string }[];
  facts: { factId: string; subject: { key: string }; predicate: string; object: { key: string } }[];
};

describe('paths: shortest connecting paths between two entities', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({}, { authenticate: principalFrom });
    await seedEntities(gw.db, NS, [
      ...['a', 'b', 'c', 'd', 'e', 'x', 'y', 'lonely'].map((key) => ({ key })),
      { key: 'z', visibility: ['workspace:hidden'] },
    ]);
    await seedFacts(gw.db, NS, [
      // A chain a → b → c → d, and a cycle back c → a.
      { subject: 'a', predicate: 'knows', object: 'b', validFrom: T0 },
      { subject: 'b', predicate: 'knows', object: 'c', validFrom: T0 },
      { subject: 'c', predicate: 'knows', object: 'd', validFrom: T0 },
      { subject: 'c', predicate: 'knows', object: 'a', validFrom: T0 },
      // Shorter: a and d are both members of x (edges point away from the middle node).
      { subject: 'a', predicate: 'member_of', object: 'x', validFrom: T0 },
      { subject: 'd', predicate: 'member_of', object: 'x', validFrom: T0 },
      // Through y only during the first half of 2024.
      {
        subject: 'a',
        predicate: 'likes',
        object: 'y',
        validFrom: at('2024-01-01T00:00:00Z'),
        validTo: at('2024-06-01T00:00:00Z'),
        status: 'SUPERSEDED',
      },
      { subject: 'y', predicate: 'likes', object: 'd', validFrom: at('2024-01-01T00:00:00Z') },
      // Through z, which only workspace:hidden may see.
      { subject: 'a', predicate: 'sees', object: 'z', validFrom: T0 },
      { subject: 'z', predicate: 'sees', object: 'd', validFrom: T0 },
      { subject: 'd', predicate: 'next', object: 'e', validFrom: T0 },
    ]);
    // Another namespace connects a and d directly: never part of an answer in NS.
    await seedEntities(gw.db, 'elsewhere', [{ key: 'a' }, { key: 'd' }]);
    await seedFacts(gw.db, 'elsewhere', [
      { subject: 'a', predicate: 'shortcut', object: 'd', validFrom: T0 },
    ]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const paths = async (vars: Record<string, unknown>, headers?: Record<string, string>) => {
    const res = await gw.gql<{ paths: Path[] }>(PATHS, { ns: NS, ...vars }, { headers });
    expect(res.errors).toBeUndefined();
    return res.data!.paths;
  };
  const keys = (ps: Path[]) => ps.map((p) => p.entities.map((e) => e.key).join('-')).sort();

  it('finds the shortest paths, whatever the edge direction, and only those', async () => {
    const ps = await paths({ from: 'a', to: 'd' });
    // a → b → c → d is longer; c → a closes a cycle, so a — c → d is as short as the others.
    expect(keys(ps)).toEqual(['a-c-d', 'a-x-d', 'a-z-d']);
    const viaX = ps.find((p) => p.entities[1]!.key === 'x')!;
    expect(viaX.length).toBe(2);
    expect(viaX.facts.map((f) => `${f.subject.key} ${f.predicate} ${f.object.key}`)).toEqual([
      'a member_of x',
      'd member_of x',
    ]);
    expect(ps.every((p) => p.entities.every((e) => e.namespace === NS))).toBe(true);
  });

  it('keeps to facts valid at asOf', async () => {
    expect(keys(await paths({ from: 'a', to: 'd', asOf: '2024-03-01T00:00:00Z' }))).toEqual([
      'a-c-d',
      'a-x-d',
      'a-y-d',
      'a-z-d',
    ]);
    expect(keys(await paths({ from: 'a', to: 'd', asOf: '2022-01-01T00:00:00Z' }))).toEqual([]);
  });

  it('never walks through what the principal may not see, nor into another namespace', async () => {
    const ps = await paths({ from: 'a', to: 'd' }, { 'x-principal': 'workspace:other' });
    expect(keys(ps)).toEqual(['a-c-d', 'a-x-d']);
    expect(JSON.stringify(ps)).not.toMatch(/shortcut/);
  });

  it('respects maxHops, crosses cycles without looping, and limits the answer', async () => {
    expect(await paths({ from: 'a', to: 'd', maxHops: 1 })).toEqual([]);
    // Odd lengths: three hops meet at 2 + 1.
    expect(keys(await paths({ from: 'a', to: 'e', maxHops: 3 }))).toEqual(['a-c-d-e', 'a-x-d-e', 'a-z-d-e']);
    expect(await paths({ from: 'a', to: 'e', maxHops: 2 })).toEqual([]);
    // The cycle a → b → c → a: the direct c → a edge is the shortest path.
    const ca = await paths({ from: 'c', to: 'a', maxHops: 4 });
    expect(keys(ca)).toEqual(['c-a']);
    expect(await paths({ from: 'a', to: 'lonely', maxHops: 4 })).toEqual([]);
    expect(await paths({ from: 'a', to: 'd', limit: 1 })).toHaveLength(1);
  });

  it('answers bad arguments with codes', async () => {
    const tooFar = await gw.gql(PATHS, { ns: NS, from: 'a', to: 'd', maxHops: 5 });
    expect(tooFar.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const same = await gw.gql(PATHS, { ns: NS, from: 'a', to: 'a' });
    expect(same.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = await gw.gql(PATHS, { ns: NS, from: 'a', to: 'nobody' });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const hidden = await gw.gql(
      PATHS,
      { ns: NS, from: 'a', to: 'z' },
      { headers: { 'x-principal': 'workspace:x' } },
    );
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
