import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { factId } from '../../src/domain/ids.js';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  at,
  seedChunks,
  seedEntities,
  seedFacts,
  seedObservations,
  seedVersions,
} from '../helpers/seed-graph.js';

const NS = 'graph';

/** `x-principal: <scope>` restricts visibility to that scope; none = local full access. */
function principalFrom(request: Request): Principal {
  const scope = request.headers.get('x-principal');
  const read = request.headers.get('x-read');
  return {
    id: scope ?? 'local',
    read: read ? [read] : ['*'],
    write: read ? [] : ['*'],
    scopes: scope ? [scope] : null,
    pii: true,
    admin: !scope,
  };
}

type FactNode = { factId: string; predicate: string; status: string; object: { key: string } };
type FactsConn = {
  totalCount: number | null;
  edges: { cursor: string; node: FactNode }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
};

const FACTS = /* GraphQL */ `
  query Facts($ns: String!, $key: String!, $asOf: DateTime, $hist: Boolean, $dir: Direction, $preds: [String!],
              $first: Int, $after: String, $last: Int, $before: String) {
    entity(namespace: $ns, key: $key) {
      facts(asOf: $asOf, includeHistory: $hist, direction: $dir, predicates: $preds,
            first: $first, after: $after, last: $last, before: $before) {
        totalCount
        edges { cursor node { factId predicate status object { key } } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

describe('graph reads: entity relations, as-of semantics, connections', () => {
  let gw: TestGateway;
  let ids: Record<string, string>;
  let obsIds: string[];

  beforeAll(async () => {
    gw = await startTestGateway({}, { authenticate: principalFrom });
    await seedEntities(gw.db, NS, [
      { key: 'alice', kind: 'person', title: 'Alice' },
      { key: 'apollo', kind: 'project' },
      { key: 'zeus', kind: 'project' },
      { key: 'hera', kind: 'project' },
      { key: 'future', kind: 'project' },
      { key: 'bob', kind: 'person' },
      { key: 'carol', kind: 'person' },
      { key: 'secret', kind: 'project', visibility: ['workspace:hidden'] },
      { key: 'ep-1', kind: 'episode', title: 'Kick-off' },
    ]);
    // The same keys in another namespace, wired differently: must never leak into NS.
    await seedEntities(gw.db, 'other', [{ key: 'alice' }, { key: 'mallory' }, { key: 'apollo' }]);
    await seedFacts(gw.db, 'other', [
      { subject: 'alice', predicate: 'works_on', object: 'mallory', validFrom: at('2020-01-01T00:00:00Z') },
      { subject: 'mallory', predicate: 'knows', object: 'apollo', validFrom: at('2020-01-01T00:00:00Z') },
    ]);
    obsIds = await seedObservations(gw.db, NS, [
      {
        system: 'tracker',
        stream: 'hr',
        externalId: 'evt-1',
        kind: 'assignment',
        occurredAt: at('2024-01-01T00:00:00Z'),
        mentions: ['alice', { key: 'ep-1', role: 'episode' }],
      },
      {
        system: 'tracker',
        stream: 'hr',
        externalId: 'evt-2',
        kind: 'reassignment',
        occurredAt: at('2024-06-01T00:00:00Z'),
        mentions: ['alice'],
      },
      {
        system: 'mail',
        externalId: 'm-3',
        kind: 'email',
        occurredAt: at('2024-07-01T00:00:00Z'),
        mentions: ['alice'],
        visibility: ['workspace:hidden'],
      },
    ]);
    const [apolloId, zeusId, heraId, futureId, bobId, carolId, secretId, lostId] = await seedFacts(
      gw.db,
      NS,
      [
        {
          subject: 'alice',
          predicate: 'works_on',
          object: 'apollo',
          validFrom: at('2024-01-01T00:00:00Z'),
          validTo: at('2024-06-01T00:00:00Z'),
          status: 'SUPERSEDED',
          observationIds: [obsIds[0]!],
        },
        {
          subject: 'alice',
          predicate: 'works_on',
          object: 'zeus',
          validFrom: at('2024-06-01T00:00:00Z'),
          observationIds: [obsIds[1]!],
        },
        {
          subject: 'alice',
          predicate: 'works_on',
          object: 'hera',
          validFrom: at('2024-02-01T00:00:00Z'),
          status: 'RETRACTED',
        },
        { subject: 'alice', predicate: 'works_on', object: 'future', validFrom: at('2099-01-01T00:00:00Z') },
        { subject: 'bob', predicate: 'manages', object: 'alice', validFrom: at('2023-01-01T00:00:00Z') },
        { subject: 'alice', predicate: 'knows', object: 'carol', validFrom: at('2023-03-01T00:00:00Z') },
        { subject: 'alice', predicate: 'works_on', object: 'secret', validFrom: at('2023-04-01T00:00:00Z') },
        {
          subject: 'alice',
          predicate: 'knows',
          object: 'bob',
          validFrom: at('2022-01-01T00:00:00Z'),
          status: 'EVIDENCE_LOST',
        },
      ],
    );
    ids = {
      apollo: apolloId!,
      zeus: zeusId!,
      hera: heraId!,
      future: futureId!,
      bob: bobId!,
      carol: carolId!,
      secret: secretId!,
      lost: lostId!,
    };
    await gw.db.query(`UPDATE facts SET superseded_by = $2 WHERE namespace = $3 AND fact_id = $1`, [
      ids.apollo,
      ids.zeus,
      NS,
    ]);
    await gw.db.query(`UPDATE facts SET supersedes = $1 WHERE namespace = $3 AND fact_id = $2`, [
      ids.apollo,
      ids.zeus,
      NS,
    ]);
    await seedVersions(gw.db, NS, [
      {
        key: 'alice',
        validFrom: at('2024-01-01T00:00:00Z'),
        validTo: at('2024-06-01T00:00:00Z'),
        attributes: { role: 'engineer' },
        observationId: obsIds[0],
      },
      { key: 'alice', validFrom: at('2024-06-01T00:00:00Z'), attributes: { role: 'lead' } },
    ]);
    await gw.db.query(
      `UPDATE entities SET attributes = '{"role":"lead"}' WHERE namespace = $1 AND key = 'alice'`,
      [NS],
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  const factsOf = async (vars: Record<string, unknown>, headers?: Record<string, string>) => {
    const res = await gw.gql<{ entity: { facts: FactsConn } }>(
      FACTS,
      { ns: NS, key: 'alice', ...vars },
      { headers },
    );
    expect(res.errors).toBeUndefined();
    return res.data!.entity.facts;
  };
  const objects = (c: FactsConn) => c.edges.map((e) => e.node.object.key).sort();

  it('as of a time before a supersession returns the old fact, after it the new one', async () => {
    const before = await factsOf({ asOf: '2024-03-01T00:00:00Z', preds: ['works_on'] });
    expect(objects(before)).toEqual(['apollo', 'secret']);
    expect(before.edges.find((e) => e.node.object.key === 'apollo')!.node.status).toBe('SUPERSEDED');
    // The last instant of [from, to) still holds the old fact; `to` itself belongs to the new one.
    const lastInstant = await factsOf({ asOf: '2024-05-31T23:59:59.999Z', preds: ['works_on'] });
    expect(objects(lastInstant)).toEqual(['apollo', 'secret']);
    const boundary = await factsOf({ asOf: '2024-06-01T00:00:00Z', preds: ['works_on'] });
    expect(objects(boundary)).toEqual(['secret', 'zeus']);
    const now = await factsOf({ preds: ['works_on'] });
    expect(objects(now)).toEqual(['secret', 'zeus']);
    // Before the first fact started, nothing of it.
    const early = await factsOf({ asOf: '2023-12-31T23:59:59Z', preds: ['works_on'] });
    expect(objects(early)).toEqual(['secret']);
  });

  it('leaves retracted, evidence-lost and not-yet-valid facts out unless history is asked for', async () => {
    const now = await factsOf({});
    expect(objects(now)).toEqual(['alice', 'carol', 'secret', 'zeus']); // bob manages alice (IN) → alice
    expect(now.totalCount).toBe(4);
    const later = await factsOf({ asOf: '2099-06-01T00:00:00Z', preds: ['works_on'] });
    expect(objects(later)).toEqual(['future', 'secret', 'zeus']);
    const history = await factsOf({ hist: true, first: 50 });
    const statuses = Object.fromEntries(history.edges.map((e) => [e.node.factId, e.node.status]));
    expect(statuses[ids.apollo!]).toBe('SUPERSEDED');
    expect(statuses[ids.hera!]).toBe('RETRACTED');
    expect(statuses[ids.lost!]).toBe('EVIDENCE_LOST');
    expect(statuses[ids.future!]).toBe('ACTIVE');
    expect(history.totalCount).toBe(8);
    // History bounded by an explicit asOf: versions that had started by then.
    const histThen = await factsOf({ hist: true, asOf: '2024-03-01T00:00:00Z', preds: ['works_on'] });
    expect(objects(histThen)).toEqual(['apollo', 'hera', 'secret']);
  });

  it('filters by direction and predicates', async () => {
    expect(objects(await factsOf({ dir: 'IN' }))).toEqual(['alice']);
    expect(objects(await factsOf({ dir: 'OUT', preds: ['knows'] }))).toEqual(['carol']);
  });

  it('hides facts whose other endpoint the principal may not see, and invisible evidence', async () => {
    const restricted = await factsOf({}, { 'x-principal': 'workspace:other' });
    expect(objects(restricted)).toEqual(['alice', 'carol', 'zeus']);
    const allowed = await factsOf({}, { 'x-principal': 'workspace:hidden' });
    expect(objects(allowed)).toEqual(['alice', 'carol', 'secret', 'zeus']);
    const obs = await gw.gql<{ entity: { observations: { totalCount: number } } }>(
      `{ entity(namespace: "${NS}", key: "alice") { observations { totalCount } } }`,
      {},
      { headers: { 'x-principal': 'workspace:other' } },
    );
    expect(obs.data!.entity.observations.totalCount).toBe(2);
  });

  it('pages facts with opaque cursors forwards and backwards', async () => {
    const all = await factsOf({ hist: true, first: 50 });
    const order = all.edges.map((e) => e.node.factId);
    expect(order).toHaveLength(8);
    const p1 = await factsOf({ hist: true, first: 3 });
    expect(p1.edges.map((e) => e.node.factId)).toEqual(order.slice(0, 3));
    expect(p1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const p2 = await factsOf({ hist: true, first: 3, after: p1.pageInfo.endCursor });
    expect(p2.edges.map((e) => e.node.factId)).toEqual(order.slice(3, 6));
    expect(p2.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const p3 = await factsOf({ hist: true, first: 3, after: p2.pageInfo.endCursor });
    expect(p3.edges.map((e) => e.node.factId)).toEqual(order.slice(6));
    expect(p3.pageInfo.hasNextPage).toBe(false);
    const back = await factsOf({ hist: true, last: 2, before: p3.pageInfo.startCursor });
    expect(back.edges.map((e) => e.node.factId)).toEqual(order.slice(4, 6));
    expect(back.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const tail = await factsOf({ hist: true, last: 2 });
    expect(tail.edges.map((e) => e.node.factId)).toEqual(order.slice(6));
    // Cursors are opaque: nothing of the key shows through.
    expect(p1.pageInfo.endCursor).not.toMatch(/fact-|alice/);
  });

  it('refuses page sizes past the maximum and foreign cursors with codes', async () => {
    const tooBig = await gw.gql(FACTS, { ns: NS, key: 'alice', first: 201 });
    expect(tooBig.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
    const bad = await gw.gql(FACTS, { ns: NS, key: 'alice', after: 'not-a-cursor' });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const lastTooBig = await gw.gql(FACTS, { ns: NS, key: 'alice', last: 201 });
    expect(lastTooBig.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
    expect(JSON.stringify(lastTooBig)).not.toMatch(/SELECT|\.ts:\d+/);
    const obsBig = await gw.gql(`{ observations(namespace: "${NS}", first: 500) { totalCount } }`);
    expect(obsBig.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
  });

  it('reads attributes from the version in force at asOf', async () => {
    const res = await gw.gql<{ entity: Record<string, unknown> }>(
      `{ entity(namespace: "${NS}", key: "alice") {
          now: attributes
          march: attributes(asOf: "2024-03-01T00:00:00Z")
          boundary: attributes(asOf: "2024-06-01T00:00:00Z")
          before: attributes(asOf: "2023-01-01T00:00:00Z")
        } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.entity).toEqual({
      now: { role: 'lead' },
      march: { role: 'engineer' },
      boundary: { role: 'lead' },
      before: null,
    });
  });

  it('lists neighbours within 1–2 hops, with distance and the fact they came through, inside the namespace', async () => {
    const q = `query($hops: Int, $limit: Int, $asOf: DateTime, $preds: [String!]) {
      entity(namespace: "${NS}", key: "bob") {
        neighbors(hops: $hops, limit: $limit, asOf: $asOf, predicates: $preds) {
          distance entity { key namespace } via { factId predicate } through { key }
        }
      }
    }`;
    type N = {
      distance: number;
      entity: { key: string; namespace: string };
      via: { factId: string; predicate: string };
      through: { key: string } | null;
    };
    const one = await gw.gql<{ entity: { neighbors: N[] } }>(q, { hops: 1 });
    expect(one.errors).toBeUndefined();
    expect(one.data!.entity.neighbors).toEqual([
      {
        distance: 1,
        entity: { key: 'alice', namespace: NS },
        via: { factId: ids.bob, predicate: 'manages' },
        through: null,
      },
    ]);
    const two = await gw.gql<{ entity: { neighbors: N[] } }>(q, { hops: 2 });
    const got = two.data!.entity.neighbors;
    // Nearest first, then the newest fact first.
    expect(got.map((n) => [n.entity.key, n.distance])).toEqual([
      ['alice', 1],
      ['zeus', 2],
      ['secret', 2],
      ['carol', 2],
    ]);
    expect(got.every((n) => n.entity.namespace === NS)).toBe(true);
    const zeus = got.find((n) => n.entity.key === 'zeus')!;
    expect(zeus).toMatchObject({ via: { factId: ids.zeus }, through: { key: 'alice' } });
    // No key of the other namespace (mallory) ever shows, although 'alice' exists there too.
    expect(got.map((n) => n.entity.key)).not.toContain('mallory');
    // As of 2024-03: apollo instead of zeus.
    const then = await gw.gql<{ entity: { neighbors: N[] } }>(q, { hops: 2, asOf: '2024-03-01T00:00:00Z' });
    expect(then.data!.entity.neighbors.map((n) => n.entity.key).sort()).toEqual([
      'alice',
      'apollo',
      'carol',
      'secret',
    ]);
    // Bounded.
    const limited = await gw.gql<{ entity: { neighbors: N[] } }>(q, { hops: 2, limit: 2 });
    expect(limited.data!.entity.neighbors).toHaveLength(2);
    expect(limited.data!.entity.neighbors[0]!.entity.key).toBe('alice');
    const tooMany = await gw.gql(q, { hops: 2, limit: 41 });
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const tooFar = await gw.gql(q, { hops: 3 });
    expect(tooFar.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // Invisible entities are not neighbours.
    const restricted = await gw.gql<{ entity: { neighbors: N[] } }>(
      q,
      { hops: 2 },
      { headers: { 'x-principal': 'workspace:x' } },
    );
    expect(restricted.data!.entity.neighbors.map((n) => n.entity.key)).not.toContain('secret');
    const preds = await gw.gql<{ entity: { neighbors: N[] } }>(q, { hops: 2, preds: ['manages', 'knows'] });
    expect(preds.data!.entity.neighbors.map((n) => n.entity.key).sort()).toEqual(['alice', 'carol']);
  });

  it('serves fact and observation by id, with their relations', async () => {
    const res = await gw.gql<{
      fact: {
        predicate: string;
        supersedes: { factId: string } | null;
        supersededBy: { factId: string } | null;
      };
      old: { supersededBy: { factId: string }; observations: { observationId: string }[] };
      observation: { kind: string; facts: { factId: string }[]; episodes: { key: string }[] };
      missing: null;
    }>(
      `query($ns: String!, $zeus: String!, $apollo: String!, $obs: String!) {
        fact(namespace: $ns, factId: $zeus) { predicate supersedes { factId } supersededBy { factId } }
        old: fact(namespace: $ns, factId: $apollo) { supersededBy { factId } observations { observationId } }
        observation(namespace: $ns, observationId: $obs) { kind facts { factId } episodes { key } }
        missing: fact(namespace: "other", factId: $zeus) { factId }
      }`,
      { ns: NS, zeus: ids.zeus, apollo: ids.apollo, obs: obsIds[0] },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.fact).toEqual({
      predicate: 'works_on',
      supersedes: { factId: ids.apollo },
      supersededBy: null,
    });
    expect(res.data!.old).toEqual({
      supersededBy: { factId: ids.zeus },
      observations: [{ observationId: obsIds[0] }],
    });
    // An observation still supports the superseded version it asserted.
    expect(res.data!.observation).toEqual({
      kind: 'assignment',
      facts: [{ factId: ids.apollo }],
      episodes: [{ key: 'ep-1' }],
    });
    expect(res.data!.missing).toBeNull();
  });

  it('lists an entity’s evidence and the namespace’s observations, newest first, paged', async () => {
    const res = await gw.gql<{
      entity: { observations: { totalCount: number; edges: { node: { kind: string } }[] } };
      all: {
        totalCount: number;
        edges: { node: { kind: string } }[];
        pageInfo: { endCursor: string; hasNextPage: boolean };
      };
      since: { edges: { node: { kind: string } }[] };
      kinds: { edges: { node: { kind: string } }[] };
    }>(
      `{ entity(namespace: "${NS}", key: "alice") { observations { totalCount edges { node { kind } } } }
         all: observations(namespace: "${NS}", first: 2) { totalCount edges { node { kind } } pageInfo { endCursor hasNextPage } }
         since: observations(namespace: "${NS}", since: "2024-06-01T00:00:00Z", until: "2024-07-01T00:00:00Z") { edges { node { kind } } }
         kinds: observations(namespace: "${NS}", kinds: ["assignment"]) { edges { node { kind } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.entity.observations.totalCount).toBe(3);
    expect(res.data!.entity.observations.edges.map((e) => e.node.kind)).toEqual([
      'email',
      'reassignment',
      'assignment',
    ]);
    expect(res.data!.all.totalCount).toBe(3);
    expect(res.data!.all.edges.map((e) => e.node.kind)).toEqual(['email', 'reassignment']);
    expect(res.data!.since.edges.map((e) => e.node.kind)).toEqual(['reassignment']);
    expect(res.data!.kinds.edges.map((e) => e.node.kind)).toEqual(['assignment']);
    const next = await gw.gql<{
      observations: { edges: { node: { kind: string } }[]; pageInfo: { hasNextPage: boolean } };
    }>(
      `query($after: String) { observations(namespace: "${NS}", first: 2, after: $after) { edges { node { kind } } pageInfo { hasNextPage } } }`,
      { after: res.data!.all.pageInfo.endCursor },
    );
    expect(next.data!.observations.edges.map((e) => e.node.kind)).toEqual(['assignment']);
    expect(next.data!.observations.pageInfo.hasNextPage).toBe(false);
  });

  it('pages an entity’s chunks in document order', async () => {
    await seedEntities(gw.db, NS, [{ key: 'handbook', kind: 'document' }]);
    await seedChunks(
      gw.db,
      NS,
      [0, 1, 2, 3, 4].map((order) => ({ nodeKey: 'handbook', order, text: `part ${order}` })),
    );
    const q = `query($first: Int, $after: String, $last: Int, $before: String) {
      entity(namespace: "${NS}", key: "handbook") {
        chunks(first: $first, after: $after, last: $last, before: $before) {
          totalCount edges { cursor node { order text } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        }
      }
    }`;
    type C = {
      entity: {
        chunks: {
          totalCount: number;
          edges: { node: { order: number } }[];
          pageInfo: {
            hasNextPage: boolean;
            hasPreviousPage: boolean;
            startCursor: string;
            endCursor: string;
          };
        };
      };
    };
    const p1 = await gw.gql<C>(q, { first: 2 });
    expect(p1.data!.entity.chunks.totalCount).toBe(5);
    expect(p1.data!.entity.chunks.edges.map((e) => e.node.order)).toEqual([0, 1]);
    const p2 = await gw.gql<C>(q, { first: 2, after: p1.data!.entity.chunks.pageInfo.endCursor });
    expect(p2.data!.entity.chunks.edges.map((e) => e.node.order)).toEqual([2, 3]);
    const back = await gw.gql<C>(q, { last: 1, before: p2.data!.entity.chunks.pageInfo.startCursor });
    expect(back.data!.entity.chunks.edges.map((e) => e.node.order)).toEqual([1]);
    expect(back.data!.entity.chunks.pageInfo.hasPreviousPage).toBe(true);
  });

  it('tells an entity’s history in time order, superseded facts included', async () => {
    const q = `query($since: DateTime, $until: DateTime, $first: Int, $after: String) {
      timeline(namespace: "${NS}", key: "alice", since: $since, until: $until, first: $first, after: $after) {
        entity { key }
        edges { node { kind at fact { factId status } observation { observationId } } }
        pageInfo { hasNextPage endCursor }
      }
    }`;
    type T = {
      timeline: {
        entity: { key: string };
        edges: {
          node: {
            kind: string;
            at: string;
            fact: { factId: string; status: string } | null;
            observation: { observationId: string } | null;
          };
        }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    };
    const res = await gw.gql<T>(q, { since: '2024-01-01T00:00:00Z', until: '2024-07-01T00:00:00Z' });
    expect(res.errors).toBeUndefined();
    const events = res.data!.timeline.edges.map((e) => [
      e.node.at,
      e.node.kind,
      e.node.fact?.factId ?? e.node.observation?.observationId,
    ]);
    expect(events).toEqual([
      ['2024-01-01T00:00:00.000Z', 'FACT_OPENED', ids.apollo],
      ['2024-01-01T00:00:00.000Z', 'OBSERVATION', obsIds[0]],
      ['2024-02-01T00:00:00.000Z', 'FACT_OPENED', ids.hera],
      ['2024-06-01T00:00:00.000Z', 'FACT_CLOSED', ids.apollo],
      ['2024-06-01T00:00:00.000Z', 'FACT_OPENED', ids.zeus],
      ['2024-06-01T00:00:00.000Z', 'OBSERVATION', obsIds[1]],
    ]);
    expect(res.data!.timeline.edges[3]!.node.fact!.status).toBe('SUPERSEDED');
    // Paging through the same window gives the same events.
    const p1 = await gw.gql<T>(q, { since: '2024-01-01T00:00:00Z', until: '2024-07-01T00:00:00Z', first: 4 });
    expect(p1.data!.timeline.pageInfo.hasNextPage).toBe(true);
    const p2 = await gw.gql<T>(q, {
      since: '2024-01-01T00:00:00Z',
      until: '2024-07-01T00:00:00Z',
      first: 4,
      after: p1.data!.timeline.pageInfo.endCursor,
    });
    expect(
      [...p1.data!.timeline.edges, ...p2.data!.timeline.edges].map(
        (e) => e.node.fact?.factId ?? e.node.observation?.observationId,
      ),
    ).toEqual(events.map((e) => e[2]));
    expect(p2.data!.timeline.pageInfo.hasNextPage).toBe(false);
    const missing = await gw.gql<{ timeline: null }>(
      `{ timeline(namespace: "${NS}", key: "nobody") { entity { key } } }`,
    );
    expect(missing.data!.timeline).toBeNull();
  });

  it('refuses namespaces the principal may not read', async () => {
    const res = await gw.gql(
      `{ observations(namespace: "${NS}") { totalCount } }`,
      {},
      { headers: { 'x-principal': 'workspace:x', 'x-read': 'elsewhere' } },
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const node = await gw.gql(
      `query($id: ID!) { node(id: $id) { id } }`,
      { id: globalId('Entity', NS, 'alice') },
      { headers: { 'x-principal': 'workspace:x', 'x-read': 'elsewhere' } },
    );
    expect(node.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('graph reads over facts and observations written through the mutations', () => {
  let gw: TestGateway;
  const ns = 'written';
  const PAYLOAD = 'accepted rejected results { status id code message }';
  type Payload = { accepted: number; rejected: number; results: { status: string; id: string | null }[] };

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const mutate = async (
    query: string,
    variables: Record<string, unknown>,
    field: string,
  ): Promise<Payload> => {
    const res = await gw.gql<Record<string, Payload>>(query, { ns, ...variables });
    expect(res.errors).toBeUndefined();
    expect(res.data![field]!.rejected).toBe(0);
    return res.data![field]!;
  };

  it('reads both sides of a supersession made by supersedeFact, and the history in the timeline', async () => {
    await mutate(
      `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${PAYLOAD} } }`,
      {
        e: [
          { key: 'dana', kind: 'person' },
          { key: 'ops', kind: 'team' },
          { key: 'dev', kind: 'team' },
        ],
      },
      'upsertEntities',
    );
    await mutate(
      `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`,
      { f: [{ subject: 'dana', predicate: 'member_of', object: 'ops', validFrom: '2025-01-01T00:00:00Z' }] },
      'assertFacts',
    );
    const opsId = factId(ns, 'dana', 'member_of', 'ops', at('2025-01-01T00:00:00Z'));
    await mutate(
      `mutation($ns: String!, $id: String!, $by: FactInput!) { supersedeFact(namespace: $ns, factId: $id, by: $by) { ${PAYLOAD} } }`,
      {
        id: opsId,
        by: { subject: 'dana', predicate: 'member_of', object: 'dev', validFrom: '2025-07-01T00:00:00Z' },
      },
      'supersedeFact',
    );
    const teamAt = async (asOf?: string) => {
      const res = await gw.gql<{
        entity: { facts: { edges: { node: { object: { key: string }; status: string } }[] } };
      }>(
        `query($ns: String!, $asOf: DateTime) { entity(namespace: $ns, key: "dana") {
           facts(asOf: $asOf, predicates: ["member_of"]) { edges { node { status object { key } } } } } }`,
        { ns, asOf },
      );
      expect(res.errors).toBeUndefined();
      return res.data!.entity.facts.edges.map((e) => `${e.node.object.key}:${e.node.status}`);
    };
    expect(await teamAt('2025-03-01T00:00:00Z')).toEqual(['ops:SUPERSEDED']);
    expect(await teamAt('2025-06-30T23:59:59.999Z')).toEqual(['ops:SUPERSEDED']);
    expect(await teamAt('2025-07-01T00:00:00Z')).toEqual(['dev:ACTIVE']);
    expect(await teamAt()).toEqual(['dev:ACTIVE']);
    expect(await teamAt('2024-12-31T00:00:00Z')).toEqual([]);
    const tl = await gw.gql<{
      timeline: { edges: { node: { kind: string; fact: { object: { key: string } } } }[] };
    }>(
      `query($ns: String!) { timeline(namespace: $ns, key: "dana") { edges { node { kind fact { object { key } } } } } }`,
      { ns },
    );
    expect(tl.data!.timeline.edges.map((e) => `${e.node.kind} ${e.node.fact.object.key}`)).toEqual([
      'FACT_OPENED ops',
      'FACT_CLOSED ops',
      'FACT_OPENED dev',
    ]);
  });

  it('walks a fact asserted inside an observation back to the observation’s source and URI', async () => {
    const recorded = await mutate(
      `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { ${PAYLOAD} } }`,
      {
        o: [
          {
            source: { system: 'jira', stream: 'OPS', externalId: 'OPS-42' },
            kind: 'ticket.assigned',
            occurredAt: '2025-08-01T09:00:00Z',
            content: 'Dana now owns the pager rotation.',
            provenance: { uri: 'https://jira.example.org/browse/OPS-42' },
            assertions: [{ fact: { subject: 'dana', predicate: 'owns', object: 'pager' } }],
          },
        ],
      },
      'recordObservations',
    );
    const owns = await gw.gql<{ entity: { facts: { edges: { node: { id: string } }[] } } }>(
      `query($ns: String!) { entity(namespace: $ns, key: "dana") { facts(predicates: ["owns"]) { edges { node { id } } } } }`,
      { ns },
    );
    const factGid = owns.data!.entity.facts.edges[0]!.node.id;
    const prov = await gw.gql<{
      provenance: {
        steps: { kind: string; uri: string | null; source: { system: string; externalId: string } | null }[];
      };
    }>(`query($id: ID!) { provenance(id: $id) { steps { kind uri source { system externalId } } } }`, {
      id: factGid,
    });
    expect(prov.errors).toBeUndefined();
    expect(prov.data!.provenance.steps).toEqual([
      { kind: 'fact', uri: expect.stringMatching(/^memgate:\/\/written\/fact\//), source: null },
      {
        kind: 'observation',
        uri: expect.stringMatching(/^memgate:\/\/written\/observation\/obs-/),
        source: { system: 'jira', externalId: 'OPS-42' },
      },
      {
        kind: 'source',
        uri: 'https://jira.example.org/browse/OPS-42',
        source: { system: 'jira', externalId: 'OPS-42' },
      },
    ]);
    // The observation lists the fact it supports; its id is the one recordObservations returned.
    const obs = await gw.gql<{ node: { facts: { id: string }[] } }>(
      `query($id: ID!) { node(id: $id) { ... on Observation { facts { id } } } }`,
      { id: recorded.results[0]!.id },
    );
    expect(obs.data!.node.facts.map((f) => f.id)).toEqual([factGid]);
  });
});
