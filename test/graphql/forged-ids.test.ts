import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGlobalId, globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

/**
 * Ids a client can forge: well-formed global ids of types that are not nodes, local ids out of
 * range or of the wrong shape, keys PostgreSQL cannot store. Each is the caller's mistake
 * (BAD_USER_INPUT) or an absent row (null / NOT_FOUND), never a masked internal error.
 */
const NS = 'forged';
const FORGED: [string, string][] = [
  ['Query typename', globalId('Query', NS, 'x')],
  ['AuditEntry typename', globalId('AuditEntry', NS, '1')],
  ['SourceDocument typename', globalId('SourceDocument', NS, 'doc:a')],
  ['ContextTrace typename', globalId('ContextTrace', NS, 'trace-1')],
  ['Node typename', globalId('Node', NS, 'x')],
  ['Mutation typename', globalId('Mutation', NS, 'x')],
  ['chunk id beyond bigint', encodeGlobalId('Chunk', `["${NS}",99999999999999999999]`)],
  ['chunk id 1e400', encodeGlobalId('Chunk', `["${NS}",1e400]`)],
  ['chunk id as SQL', globalId('Chunk', NS, '1 OR 1=1')],
  ['chunk id negative', globalId('Chunk', NS, -1)],
  ['chunk id fraction', globalId('Chunk', NS, 1.5)],
  ['chunk id huge string', globalId('Chunk', NS, '9'.repeat(40))],
  ['entity key with NUL', globalId('Entity', NS, 'a\u0000b')],
  ['fact id with NUL', globalId('Fact', NS, 'fact-\u0000')],
  ['observation id with NUL', globalId('Observation', NS, 'obs-\u0000')],
  ['namespace with NUL', globalId('Entity', 'a\u0000b', 'k')],
  ['entity key lone surrogate', globalId('Entity', NS, 'x\ud800')],
  ['three parts', globalId('Entity', NS, 'k', 'extra')],
  ['not JSON', encodeGlobalId('Entity', 'not json')],
  ['object local id', encodeGlobalId('Entity', '{"a":1}')],
  ['number namespace', encodeGlobalId('Entity', '[1,"k"]')],
];

const FIELDS: [string, string, (id: string) => Record<string, unknown>][] = [
  ['node', 'query($id: ID!) { node(id: $id) { id __typename } }', (id) => ({ id })],
  ['nodes', 'query($id: ID!) { nodes(ids: [$id]) { id } }', (id) => ({ id })],
  ['provenance', 'query($id: ID!) { provenance(id: $id) { truncated } }', (id) => ({ id })],
];

describe('forged ids never crash', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  for (const [field, query, variables] of FIELDS) {
    it.each(FORGED)(`${field}: %s is BAD_USER_INPUT or absent`, async (_label, id) => {
      const res = await gw.gql(query, variables(id));
      expect(res.status).toBeLessThan(500);
      for (const e of res.errors ?? []) expect(['BAD_USER_INPUT', 'NOT_FOUND']).toContain(e.extensions?.code);
      if (!res.errors) expect(Object.values(res.data ?? {})).toEqual([field === 'nodes' ? [null] : null]);
    });
  }

  it.each([['entity key with NUL', `{ entity(namespace: "${NS}", key: "a\\u0000b") { key } }`]])(
    '%s as an argument is BAD_USER_INPUT',
    async (_label, query) => {
      const res = await gw.gql(query);
      expect(res.status).toBeLessThan(500);
      expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.message).toMatch(/NUL/);
    },
  );

  it('a real id still resolves', async () => {
    await gw.gql(
      `mutation { upsertEntities(namespace: "${NS}", entities: [{ key: "k", kind: "thing", title: "K" }]) { accepted } }`,
    );
    const res = await gw.gql('query($id: ID!) { node(id: $id) { id } }', { id: globalId('Entity', NS, 'k') });
    expect(res.data).toEqual({ node: { id: globalId('Entity', NS, 'k') } });
  });
});
