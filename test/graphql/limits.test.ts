import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres-database.js';
import { sha256Hex } from '../../src/security/persisted-operations.js';
import { type GqlResponse, type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { onNativePostgres } from '../helpers/test-database.js';

type Raw = { status: number; body: GqlResponse };

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as GqlResponse };
}

function limitOf(res: GqlResponse): string | undefined {
  return res.errors?.[0]?.extensions?.limit as string | undefined;
}

/** An operation exactly `levels` fields deep: entity, then rounds of facts/edges/node/subject. */
function nested(levels: number): string {
  const rounds = Math.floor((levels - 2) / 4);
  const tails = [
    'key',
    'facts(first: 1) { totalCount }',
    'facts(first: 1) { edges { cursor } }',
    'facts(first: 1) { edges { node { factId } } }',
  ];
  const tail = tails[levels - 1 - 4 * rounds - 1]!;
  const open = 'facts(first: 1) { edges { node { subject { '.repeat(rounds);
  const close = ' } } } }'.repeat(rounds);
  return `{ entity(namespace: "lim", key: "a") { ${open}${tail}${close} } }`;
}

describe('query limits', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
    const res = await gw.gql(
      `mutation { upsertEntities(namespace: "lim", entities: [{ key: "a", kind: "note" }, { key: "b", kind: "note" }]) { accepted } }`,
    );
    expect(res.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('refuses operations deeper than 12 fields, fragments included; 12 is fine', async () => {
    const ok = await gw.gql(nested(12));
    expect(ok.errors).toBeUndefined();
    const deep = await gw.gql(nested(13));
    expect(deep.status).toBe(400);
    expect(deep.errors?.[0]?.extensions).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'depth',
      max: 12,
      actual: 13,
    });
    const viaFragments = await gw.gql(
      `query { entity(namespace: "lim", key: "a") { ...A } }
       fragment A on Entity { facts(first: 1) { edges { node { ...B } } } }
       fragment B on Fact { subject { facts(first: 1) { edges { node { ...C } } } } }
       fragment C on Fact { object { facts(first: 1) { edges { node { subject { key } } } } } }`,
    );
    expect(limitOf(viaFragments)).toBe('depth');
  });

  it('does not count introspection against depth (it is switched off in production instead)', async () => {
    const res = await gw.gql(getIntrospectionQuery());
    expect(res.errors).toBeUndefined();
    expect((res.data as { __schema: { types: unknown[] } }).__schema.types.length).toBeGreaterThan(10);
  });

  it('refuses more than 30 aliases, counting each expansion of a fragment', async () => {
    const aliases = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `a${i}: entity(namespace: "lim", key: "a") { key }`).join(' ')} }`;
    expect((await gw.gql(aliases(30))).errors).toBeUndefined();
    const many = await gw.gql(aliases(31));
    expect(many.status).toBe(400);
    expect(many.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'aliases', max: 30 });
    const spread = await gw.gql(
      `{ x: entity(namespace: "lim", key: "a") { ...F } y: entity(namespace: "lim", key: "a") { ...F }
         z: entity(namespace: "lim", key: "a") { ...F } }
       fragment F on Entity { ${Array.from({ length: 10 }, (_, i) => `k${i}: key`).join(' ')} }`,
    );
    expect(limitOf(spread)).toBe('aliases');
  });

  it('refuses operations whose estimated cost is too high, counting page sizes from variables', async () => {
    const query = /* GraphQL */ `
      query Cost($n: Int, $m: Int) {
        entities(namespace: "lim", first: $n) {
          edges { node { facts(first: $m) { edges { node { subject { key } object { key } observations { content } } } } } }
        }
      }`;
    const cheap = await gw.gql(query, { n: 20, m: 20 });
    expect(cheap.errors).toBeUndefined();
    const costly = await gw.gql(query, { n: 200, m: 200 });
    expect(costly.status).toBe(400);
    expect(costly.data ?? null).toBeNull();
    expect(costly.errors?.[0]?.extensions).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'cost',
      max: 50000,
    });
    expect(costly.extensions?.sql?.statements ?? 0).toBe(0);
  });

  it('lets an agent ask for the largest context pack with its usual selection', async () => {
    const res = await gw.gql(/* GraphQL */ `
      query Pack {
        context(input: { namespaces: ["lim"], query: "status of the payments service", k: 64 }) {
          traceId text tokenEstimate warnings
          sections { kind items { id kind text title score conflict tokenEstimate
            signals { rrf exactId scope current evidence freshness channels { channel rank score } }
            provenance { steps { kind id label uri } } } }
          budget { maxTokens used truncated dropped { id reason tokenEstimate } }
        }
      }`);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  });

  it('refuses lists longer than 1000 items in any argument, literal or variable', async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => `id${i}`);
    const viaVariable = await gw.gql('query N($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids });
    expect(viaVariable.errors?.[0]?.extensions).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'listSize',
      max: 1000,
      actual: 1001,
    });
    const literal = await gw.gql(
      `{ entities(namespace: "lim", kinds: ${JSON.stringify(ids)}) { totalCount } }`,
    );
    expect(limitOf(literal)).toBe('listSize');
    const batch = await gw.gql(
      'mutation U($e: [EntityInput!]!) { upsertEntities(namespace: "lim", entities: $e) { accepted } }',
      { e: Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, kind: 'note' })) },
    );
    expect(limitOf(batch)).toBe('listSize');
    const count = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM entities WHERE namespace = 'lim'`,
    );
    expect(count.rows[0]!.n).toBe(2);
  });

  it('checks each request of a repeated document on its own values', async () => {
    // Checked once per document for its String/enum variables; every request's values still count.
    const doc = `query Q($ns: String!, $key: String!, $dir: Direction) {
      entity(namespace: $ns, key: $key) { key facts(first: 2, direction: $dir) { totalCount } }
    }`;
    const ok = await gw.gql(doc, { ns: 'lim', key: 'a', dir: 'OUT' });
    expect(ok.errors).toBeUndefined();
    const nul = await gw.gql(doc, { ns: 'lim', key: 'a\u0000b' });
    expect(nul.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(nul.errors?.[0]?.message).toMatch(/Argument "key" of "entity"/);
    const badEnum = await gw.gql(doc, { ns: 'lim', key: 'a', dir: 'SIDEWAYS' });
    expect(badEnum.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = await gw.gql(doc, { ns: 'lim' });
    expect(missing.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // A literal page size over the cost limit is refused whatever the variables say.
    const costly = `query C($ns: String!) { entities(namespace: $ns, first: 100) {
      edges { node { facts(first: 100) { edges { node { object { facts(first: 100) { edges { node { factId } } } } } } } } } } }`;
    for (const ns of ['lim', 'other']) {
      const res = await gw.gql(costly, { ns });
      expect(limitOf(res)).toBe('cost');
    }
    expect((await gw.gql(doc, { ns: 'lim', key: 'b' })).errors).toBeUndefined();
  });

  it('refuses page sizes past the maximum', async () => {
    const res = await gw.gql('{ entities(namespace: "lim", first: 201) { totalCount } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
  });

  it('refuses GraphQL batching with a coded error', async () => {
    const res = await post(gw.url, [{ query: '{ __typename }' }, { query: '{ __typename }' }]);
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('refuses deeply nested documents and variables before parsing them', async () => {
    const deepDoc = await post(gw.url, {
      query: `{ entities(namespace: "lim", kinds: ${'['.repeat(5000)}"x"${']'.repeat(5000)}) { totalCount } }`,
    });
    expect(deepDoc.status).toBe(400);
    expect(deepDoc.body.errors?.[0]?.extensions).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'documentNesting',
    });
    // Brackets inside strings and comments do not count.
    const quoted = await gw.gql(
      `{ entity(namespace: "lim", key: "${'['.repeat(100)}") { key } } # ${'{'.repeat(100)}`,
    );
    expect(quoted.errors).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = { a: deep };
    const deepVars = await post(gw.url, {
      query:
        'mutation U($e: [EntityInput!]!) { upsertEntities(namespace: "lim", entities: $e) { accepted } }',
      variables: { e: [{ key: 'deep', kind: 'note', attributes: deep }] },
    });
    expect(deepVars.status).toBe(400);
    expect(deepVars.body.errors?.[0]?.extensions).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'inputDepth',
    });
  });

  it('refuses documents with too many tokens', async () => {
    const fields = Array.from({ length: 6000 }, () => '__typename').join(' ');
    const res = await post(gw.url, { query: `{ ${fields} }` });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.message).toMatch(/tokens/);
    expect(res.body.errors?.[0]?.extensions?.code).toBeTruthy();
  });

  it('refuses bodies over the limit even when sent chunked, and stays up', async () => {
    const small = await startTestGateway({ MEMGATE_MAX_BODY_BYTES: '4096' });
    try {
      const chunk = new TextEncoder().encode(
        `{"query":"{ __typename }","variables":{"x":"${'y'.repeat(8000)}"}}`,
      );
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(chunk.slice(0, 3000));
          controller.enqueue(chunk.slice(3000));
          controller.close();
        },
      });
      const res = await fetch(small.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      const body = (await res.json()) as GqlResponse;
      expect(body.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
      expect((await small.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
    } finally {
      await small.close();
    }
  });

  it('takes its limits from the environment', async () => {
    const strict = await startTestGateway({
      MEMGATE_MAX_DEPTH: '3',
      MEMGATE_MAX_ALIASES: '1',
      MEMGATE_MAX_COST: '10',
      MEMGATE_MAX_LIST_SIZE: '2',
    });
    try {
      expect(
        limitOf(await strict.gql('{ entity(namespace: "x", key: "a") { facts { edges { cursor } } } }')),
      ).toBe('depth');
      expect(limitOf(await strict.gql('{ a: __typename b: __typename }'))).toBe('aliases');
      expect(limitOf(await strict.gql('{ entities(namespace: "x", first: 20) { edges { cursor } } }'))).toBe(
        'cost',
      );
      expect(limitOf(await strict.gql('{ nodes(ids: ["a", "b", "c"]) { id } }'))).toBe('listSize');
    } finally {
      await strict.close();
    }
  });

  it('answers every limit like a validation error: 400 for graphql-response+json, 200 for application/json', async () => {
    let deepVariables: unknown = 1;
    for (let i = 0; i < 100; i++) deepVariables = { a: deepVariables };
    const costQuery = `query Cost($n: Int, $m: Int) { entities(namespace: "lim", first: $n) {
      edges { node { facts(first: $m) { edges { node { subject { key } object { key } observations { content } } } } } } } }`;
    const cases: { name: string; body: unknown; code: string; limit?: string }[] = [
      // yoga's own request errors, the rule the limits follow
      {
        name: 'unknown field',
        body: { query: '{ entitty(namespace: "lim", key: "a") { key } }' },
        code: 'BAD_USER_INPUT',
      },
      { name: 'syntax error', body: { query: '{ entity(namespace: ' }, code: 'GRAPHQL_PARSE_FAILED' },
      { name: 'depth', body: { query: nested(13) }, code: 'LIMIT_EXCEEDED', limit: 'depth' },
      {
        name: 'aliases',
        body: {
          query: `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: entity(namespace: "lim", key: "a") { key }`).join(' ')} }`,
        },
        code: 'LIMIT_EXCEEDED',
        limit: 'aliases',
      },
      {
        name: 'cost',
        body: { query: costQuery, variables: { n: 200, m: 200 } },
        code: 'LIMIT_EXCEEDED',
        limit: 'cost',
      },
      {
        name: 'list size',
        body: {
          query: 'query N($ids: [ID!]!) { nodes(ids: $ids) { id } }',
          variables: { ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) },
        },
        code: 'LIMIT_EXCEEDED',
        limit: 'listSize',
      },
      {
        name: 'document nesting',
        body: {
          query: `{ entities(namespace: "lim", kinds: ${'['.repeat(100)}"x"${']'.repeat(100)}) { totalCount } }`,
        },
        code: 'LIMIT_EXCEEDED',
        limit: 'documentNesting',
      },
      {
        name: 'variables nesting',
        body: {
          query:
            'mutation U($e: [EntityInput!]!) { upsertEntities(namespace: "lim", entities: $e) { accepted } }',
          variables: { e: [{ key: 'deep', kind: 'note', attributes: deepVariables }] },
        },
        code: 'LIMIT_EXCEEDED',
        limit: 'inputDepth',
      },
    ];
    for (const c of cases) {
      for (const [accept, status, type] of [
        ['application/graphql-response+json', 400, 'application/graphql-response+json'],
        ['application/graphql-response+json, application/json', 400, 'application/graphql-response+json'],
        ['application/json', 200, 'application/json'],
        ['*/*', 200, 'application/json'],
      ] as const) {
        const res = await fetch(gw.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept },
          body: JSON.stringify(c.body),
        });
        const body = (await res.json()) as GqlResponse;
        expect(res.headers.get('content-type'), c.name).toContain(type);
        expect(body.data ?? null, c.name).toBeNull();
        expect(body.errors?.[0]?.extensions, c.name).toMatchObject({
          code: c.code,
          ...(c.limit ? { limit: c.limit } : {}),
        });
        expect(res.status, `${c.name}, accept ${accept}`).toBe(status);
      }
    }
  });

  // Native pass only: PGlite runs in this process and has no server-side statement timeout.
  it.skipIf(!onNativePostgres)(
    'native PostgreSQL cancels statements past the statement timeout',
    async () => {
      const db = await openPostgres({
        connectionString: process.env.DATABASE_URL!,
        statementTimeoutMs: 200,
        max: 1,
      });
      try {
        const started = Date.now();
        await expect(db.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
        expect(Date.now() - started).toBeLessThan(3000);
      } finally {
        await db.close();
      }
    },
  );
});

describe('production mode', () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    const written = writeTokensFile([{ id: 'agent', read: ['*'], write: ['*'] }]);
    token = written.tokens.agent!;
    gw = await startTestGateway({ MEMGATE_PRODUCTION: '1', MEMGATE_TOKENS_FILE: written.path });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('refuses introspection but keeps __typename', async () => {
    const res = await gw.gql(getIntrospectionQuery(), {}, { token });
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const type = await gw.gql('{ __type(name: "Entity") { name } }', {}, { token });
    expect(type.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const typename = await gw.gql('{ __typename }', {}, { token });
    expect(typename.data).toEqual({ __typename: 'Query' });
  });

  it('drops "Did you mean" suggestions that would spell out the schema', async () => {
    const res = await gw.gql('{ entitty(namespace: "x", key: "a") { key } }', {}, { token });
    expect(res.errors?.[0]?.message).toBe('Cannot query field "entitty" on type "Query".');
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('serves no GraphiQL', async () => {
    const res = await fetch(gw.url, { headers: { accept: 'text/html', authorization: `Bearer ${token}` } });
    expect(await res.text()).not.toMatch(/<html/i);
  });
});

describe('persisted operations', () => {
  const listed = 'query Listed($ns: String!) { entities(namespace: $ns, first: 5) { totalCount } }';
  let gw: TestGateway;
  beforeAll(async () => {
    const { dir } = writeTokensFile([]);
    const path = join(dir, 'persisted.json');
    writeFileSync(
      path,
      JSON.stringify({ [`sha256:${sha256Hex(listed)}`]: listed, 'typename-v1': '{ __typename }' }),
    );
    gw = await startTestGateway({ MEMGATE_PERSISTED_OPERATIONS: path });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('runs listed operations by documentId, by Apollo hash, or by their exact text', async () => {
    const byId = await post(gw.url, { documentId: 'typename-v1' });
    expect(byId.body.data).toEqual({ __typename: 'Query' });
    const byHash = await post(gw.url, {
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(listed) } },
      variables: { ns: 'p' },
    });
    expect(byHash.body).toMatchObject({ data: { entities: { totalCount: 0 } } });
    const byText = await post(gw.url, { query: listed, variables: { ns: 'p' } });
    expect(byText.body.errors).toBeUndefined();
  });

  it('refuses anything else with a code', async () => {
    const other = await post(gw.url, { query: '{ entities(namespace: "p") { totalCount } }' });
    expect(other.status).toBe(400);
    expect(other.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    const unknown = await post(gw.url, { documentId: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const get = await fetch(
      `${gw.url}?query=${encodeURIComponent('{ __typename __schema { types { name } } }')}`,
      {
        headers: { accept: 'application/json' },
      },
    );
    const body = (await get.json()) as GqlResponse;
    expect(body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
  });
});
