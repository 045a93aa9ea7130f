import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const UPSERT = /* GraphQL */ `
  mutation Upsert($ns: String!, $entities: [EntityInput!]!) {
    upsertEntities(namespace: $ns, entities: $entities) {
      accepted
      rejected
      results { index status id key code message }
    }
  }
`;

const ENTITY = /* GraphQL */ `
  query Entity($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) { id namespace key kind title scopes origin sourcePath confidence }
  }
`;

describe('entities: the first vertical slice over HTTP', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('writes a batch, rejecting the invalid item with a code while keeping the others', async () => {
    const res = await gw.gql(UPSERT, {
      ns: 'acme',
      entities: [
        { key: 'alice', kind: 'person', title: 'Alice', attributes: { role: 'engineer' } },
        { key: 'bad', kind: 'Not A Kind' },
        { key: 'apollo', kind: 'project', scopes: ['project:apollo'] },
      ],
    });
    expect(res.errors).toBeUndefined();
    const payload = (
      res.data as {
        upsertEntities: {
          accepted: number;
          rejected: number;
          results: { status: string; code: string | null; message: string | null; key: string }[];
        };
      }
    ).upsertEntities;
    expect(payload.accepted).toBe(2);
    expect(payload.rejected).toBe(1);
    expect(payload.results.map((r) => r.status)).toEqual(['CREATED', 'REJECTED', 'CREATED']);
    expect(payload.results[1]!.code).toBe('BAD_USER_INPUT');
    expect(payload.results[1]!.message).toMatch(/kind/);
    const alice = await gw.gql(ENTITY, { ns: 'acme', key: 'alice' });
    expect(alice.data).toMatchObject({
      entity: { key: 'alice', kind: 'person', title: 'Alice', origin: 'AGENT' },
    });
  });

  it('is idempotent: the same entity again is UNCHANGED, a change is UPDATED', async () => {
    const again = await gw.gql(UPSERT, {
      ns: 'acme',
      entities: [{ key: 'alice', kind: 'person', title: 'Alice', attributes: { role: 'engineer' } }],
    });
    expect(again.data).toMatchObject({ upsertEntities: { results: [{ status: 'UNCHANGED' }] } });
    const changed = await gw.gql(UPSERT, {
      ns: 'acme',
      entities: [{ key: 'alice', kind: 'person', title: 'Alice Smith' }],
    });
    expect(changed.data).toMatchObject({ upsertEntities: { results: [{ status: 'UPDATED' }] } });
  });

  it('keeps namespaces apart', async () => {
    const other = await gw.gql(ENTITY, { ns: 'other', key: 'alice' });
    expect(other.data).toEqual({ entity: null });
  });

  it('resolves node(id) and nodes(ids) from global ids', async () => {
    const alice = await gw.gql<{ entity: { id: string } }>(ENTITY, { ns: 'acme', key: 'alice' });
    const id = alice.data!.entity.id;
    const res = await gw.gql(
      `query($id: ID!, $ids: [ID!]!) { node(id: $id) { id ... on Entity { key } } nodes(ids: $ids) { id } }`,
      { id, ids: [id, globalId('Entity', 'acme', 'nobody')] },
    );
    expect(res.data).toMatchObject({ node: { id, key: 'alice' }, nodes: [{ id }, null] });
    const malformed = await gw.gql(`{ node(id: "bm9wZQ==") { id } }`);
    expect(malformed.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('pages a Relay connection with opaque cursors both ways', async () => {
    const many = Array.from({ length: 7 }, (_, i) => ({ key: `svc-${i}`, kind: 'service' }));
    await gw.gql(UPSERT, { ns: 'paging', entities: many });
    const q = `query($first: Int, $after: String, $last: Int, $before: String) {
      entities(namespace: "paging", kinds: ["service"], first: $first, after: $after, last: $last, before: $before) {
        totalCount edges { cursor node { key } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }`;
    type Conn = {
      entities: {
        totalCount: number;
        edges: { node: { key: string } }[];
        pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string; startCursor: string };
      };
    };
    const p1 = await gw.gql<Conn>(q, { first: 3 });
    expect(p1.data!.entities.totalCount).toBe(7);
    expect(p1.data!.entities.edges.map((e) => e.node.key)).toEqual(['svc-0', 'svc-1', 'svc-2']);
    expect(p1.data!.entities.pageInfo.hasNextPage).toBe(true);
    const p2 = await gw.gql<Conn>(q, { first: 3, after: p1.data!.entities.pageInfo.endCursor });
    expect(p2.data!.entities.edges.map((e) => e.node.key)).toEqual(['svc-3', 'svc-4', 'svc-5']);
    expect(p2.data!.entities.pageInfo.hasPreviousPage).toBe(true);
    const back = await gw.gql<Conn>(q, { last: 2, before: p2.data!.entities.pageInfo.startCursor });
    expect(back.data!.entities.edges.map((e) => e.node.key)).toEqual(['svc-1', 'svc-2']);
    expect(back.data!.entities.pageInfo.hasPreviousPage).toBe(true);
  });

  it('answers a bad argument with a coded error and no stack trace or SQL', async () => {
    const badCursor = await gw.gql(`{ entities(namespace: "acme", after: "garbage") { totalCount } }`);
    expect(badCursor.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const tooBig = await gw.gql(`{ entities(namespace: "acme", first: 100000) { totalCount } }`);
    expect(tooBig.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
    const badNs = await gw.gql(`{ entity(namespace: "no spaces allowed", key: "x") { key } }`);
    expect(badNs.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const unknownField = await gw.gql(`{ entity(namespace: "acme", key: "x") { nope } }`);
    expect(unknownField.errors?.[0]?.extensions?.code).toBeTruthy();
    for (const r of [badCursor, tooBig, badNs, unknownField]) {
      const text = JSON.stringify(r);
      expect(text).not.toMatch(/at \w+ \(|\.ts:\d+|SELECT |INSERT /);
    }
  });

  it('reports SQL statements per request in extensions.sql', async () => {
    const res = await gw.gql(ENTITY, { ns: 'acme', key: 'alice' });
    expect(res.extensions?.sql?.statements).toBe(1);
  });
});
