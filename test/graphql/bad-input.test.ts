import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { missingRootFields } from '../helpers/schema-fields.js';

/**
 * Hostile and broken input through the real HTTP server. Whatever arrives, the answer is a
 * well-formed GraphQL response — a result, or errors that each carry `extensions.code` (batch
 * items: REJECTED with a code) — with a 2xx/4xx status, never a 5xx; the server stays up;
 * nothing of another namespace or another visibility scope shows; the rows written before
 * are unchanged.
 */

const NS = 'bad';
const OTHER_MARKER = 'zircon'; // only in namespace `other`
const SCOPED_MARKER = 'obsidian'; // only in rows scoped workspace:hidden
const MIB = 1024 * 1024;

const HOSTILE_STRINGS: [string, string][] = [
  ['sql quote', `'; DROP TABLE entities; --`],
  ['sql or', `" OR 1=1 --`],
  ['sql comment', '*/ SELECT * FROM audit_log /*'],
  ['sql like wildcards', '%_%\\'],
  ['sql placeholder', '$1::text[]'],
  ['sql semicolon batch', 'x; DELETE FROM facts WHERE true; SELECT 1'],
  ['nul byte', 'a\u0000b'],
  ['control characters', '\u0001\u0002\u001b[31m\u007f'],
  ['line separators', 'a\u2028b\u2029c\r\n'],
  ['lone surrogate', 'x\ud800y'],
  ['bom and zero width', '\ufeff\u200b\u200d'],
  ['unicode', 'Привет 世界 🧠'],
  ['empty', ''],
  ['whitespace', '   \t  '],
  ['graphql syntax', '{ __schema { types { name } } }'],
  ['json', '{"a":[1,2,{"b":null}]}'],
  ['long 10k', 'k'.repeat(10_000)],
  ['1 MiB + 1', 'm'.repeat(MIB + 1)],
  ['namespace glob', '*'],
  ['other namespace', 'other'],
  ['path traversal', '../../etc/passwd'],
  ['base64 global id', Buffer.from('Entity:["other","secret"]').toString('base64')],
];

interface Operation {
  name: string;
  query: string;
  variables: (value: string) => Record<string, unknown>;
}

/** Argument positions a hostile string is put in. */
const OPERATIONS: Operation[] = [
  {
    name: 'entity namespace',
    query: 'query($v: String!) { entity(namespace: $v, key: "k") { key } }',
    variables: (v) => ({ v }),
  },
  {
    name: 'entity key',
    query: `query($v: String!) { entity(namespace: "${NS}", key: $v) { key title } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'entities keyPrefix + kinds',
    query: `query($v: String!) { entities(namespace: "${NS}", keyPrefix: $v, kinds: [$v]) { totalCount edges { node { key } } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'entities cursor',
    query: `query($v: String!) { entities(namespace: "${NS}", after: $v) { totalCount } }`,
    variables: (v) => ({ v }),
  },
  { name: 'node id', query: 'query($v: ID!) { node(id: $v) { id } }', variables: (v) => ({ v }) },
  {
    name: 'fact id',
    query: `query($v: String!) { fact(namespace: "${NS}", factId: $v) { factId } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'source key',
    query: `query($v: String!) { source(namespace: "${NS}", key: $v) { key content } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'paths endpoints',
    query: `query($v: String!) { paths(namespace: "${NS}", from: $v, to: "public") { facts { factId } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'search query',
    query: `query($v: String!) { search(input: { namespaces: ["${NS}"], query: $v, k: 5 }) { context hits { chunk { text } } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'search filters',
    query: `query($v: String!) { search(input: { namespaces: ["${NS}"], query: "note", filters: { kinds: [$v], scopes: [$v], meta: { tag: $v } } }) { hits { chunk { text } } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'context query and anchors',
    query: `query($v: String!) { context(input: { namespaces: ["${NS}"], query: $v, anchors: [$v], ephemeralContext: { note: $v } }) { text } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'contextTrace id',
    query: `query($v: String!) { contextTrace(namespace: "${NS}", traceId: $v) { traceId } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'upsert key, title, attributes, scopes',
    query: `mutation($v: String!) { upsertEntities(namespace: "${NS}", entities: [{ key: $v, kind: "note", title: $v, attributes: { v: $v }, scopes: [$v] }, { key: $v, kind: "note", title: $v }]) { accepted rejected results { status code message } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'observation content and data',
    query: `mutation($v: String!) { recordObservations(namespace: "${NS}", observations: [{ source: { system: $v, externalId: $v }, kind: "note", occurredAt: "2024-01-01T00:00:00Z", content: $v, data: { v: $v } }]) { accepted rejected results { status code message } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'document',
    query: `mutation($v: String!) { retainDocuments(namespace: "${NS}", documents: [{ key: "doc:hostile", title: $v, content: $v, links: [$v] }]) { accepted rejected results { status code message } } }`,
    variables: (v) => ({ v }),
  },
  {
    name: 'fact endpoints',
    query: `mutation($v: String!) { assertFacts(namespace: "${NS}", facts: [{ subject: $v, predicate: $v, object: "public" }]) { accepted rejected results { status code message } } }`,
    variables: (v) => ({ v }),
  },
];

/** Variables of the wrong shape for typed arguments. */
const TYPED_CASES: [string, string, Record<string, unknown>][] = [
  ['huge Int', `query($n: Int) { entities(namespace: "${NS}", first: $n) { totalCount } }`, { n: 2 ** 53 }],
  ['negative Int', `query($n: Int) { entities(namespace: "${NS}", first: $n) { totalCount } }`, { n: -1 }],
  ['float for Int', `query($n: Int) { entities(namespace: "${NS}", first: $n) { totalCount } }`, { n: 1.5 }],
  [
    'string for Int',
    `query($n: Int) { entities(namespace: "${NS}", first: $n) { totalCount } }`,
    { n: '10' },
  ],
  [
    'huge hops',
    `query($n: Int) { entity(namespace: "${NS}", key: "public") { neighbors(hops: $n) { distance } } }`,
    { n: 2147483647 },
  ],
  [
    'huge budget',
    `query($n: Int) { context(input: { namespaces: ["${NS}"], query: "note", budgetTokens: $n }) { tokenEstimate } }`,
    { n: 2147483647 },
  ],
  [
    'huge k',
    `query($n: Int) { search(input: { namespaces: ["${NS}"], query: "note", k: $n }) { hits { score } } }`,
    { n: 2147483647 },
  ],
  [
    'huge float',
    `mutation($c: Float) { upsertEntities(namespace: "${NS}", entities: [{ key: "f", kind: "note", confidence: $c }]) { results { status code } } }`,
    { c: 1e308 },
  ],
  [
    'tiny float',
    `mutation($c: Float) { upsertEntities(namespace: "${NS}", entities: [{ key: "f", kind: "note", confidence: $c }]) { results { status code } } }`,
    { c: -1e-308 },
  ],
  [
    'huge weight',
    `query($w: Float) { search(input: { namespaces: ["${NS}"], query: "note", weights: { vector: $w } }) { hits { score } } }`,
    { w: 1e308 },
  ],
  [
    'invalid date month',
    `query($d: DateTime) { observations(namespace: "${NS}", since: $d) { totalCount } }`,
    { d: '2024-13-45T00:00:00Z' },
  ],
  [
    'invalid date day',
    `query($d: DateTime) { observations(namespace: "${NS}", since: $d) { totalCount } }`,
    { d: '2024-02-30T00:00:00Z' },
  ],
  [
    'date without zone',
    `query($d: DateTime) { observations(namespace: "${NS}", since: $d) { totalCount } }`,
    { d: '2024-01-01T00:00:00' },
  ],
  [
    'date as number',
    `query($d: DateTime) { observations(namespace: "${NS}", since: $d) { totalCount } }`,
    { d: 1700000000 },
  ],
  [
    'far date',
    `query($d: DateTime) { observations(namespace: "${NS}", since: $d) { totalCount } }`,
    { d: '+275760-09-13T00:00:00Z' },
  ],
  [
    'year 0',
    `query($d: DateTime) { entity(namespace: "${NS}", key: "public") { attributes(asOf: $d) } }`,
    { d: '0000-01-01T00:00:00Z' },
  ],
  [
    'unknown enum',
    `query($d: Direction) { entity(namespace: "${NS}", key: "public") { facts(direction: $d) { totalCount } } }`,
    { d: 'SIDEWAYS' },
  ],
  [
    'lower-case enum',
    `query($m: SearchMode) { search(input: { namespaces: ["${NS}"], query: "x", mode: $m }) { hits { score } } }`,
    { m: 'hybrid' },
  ],
  [
    'enum as number',
    `mutation($e: Evidence) { assertFacts(namespace: "${NS}", facts: [{ subject: "a", predicate: "p", object: "b", evidence: $e }]) { results { status code } } }`,
    { e: 3 },
  ],
  [
    'object for string',
    `query($v: String!) { entity(namespace: "${NS}", key: $v) { key } }`,
    { v: { $ne: null } },
  ],
  [
    'array for string',
    `query($v: String!) { entity(namespace: "${NS}", key: $v) { key } }`,
    { v: ['a', 'b'] },
  ],
  ['null for non-null', `query($v: String!) { entity(namespace: "${NS}", key: $v) { key } }`, { v: null }],
  ['missing variable', `query($v: String!) { entity(namespace: "${NS}", key: $v) { key } }`, {}],
  [
    'unknown input field',
    `mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { accepted } }`,
    { e: [{ key: 'x', kind: 'note', evil: true }] },
  ],
  [
    'deep JSON',
    `mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { accepted } }`,
    { e: [{ key: 'deep', kind: 'note', attributes: nest(200) }] },
  ],
  [
    'prototype keys',
    `mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { accepted results { status code } } }`,
    {
      e: [
        {
          key: 'proto',
          kind: 'note',
          attributes: JSON.parse('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'),
        },
      ],
    },
  ],
  [
    'ids huge list',
    'query($ids: [ID!]!) { nodes(ids: $ids) { id } }',
    { ids: Array.from({ length: 5000 }, (_, i) => `x${i}`) },
  ],
];

/** Raw bodies and content types. */
const RAW_CASES: [string, Record<string, string>, string | Uint8Array | undefined][] = [
  ['truncated JSON', { 'content-type': 'application/json' }, '{"query": "{ __typename'],
  ['empty body', { 'content-type': 'application/json' }, ''],
  ['JSON null', { 'content-type': 'application/json' }, 'null'],
  ['JSON string', { 'content-type': 'application/json' }, '"{ __typename }"'],
  ['JSON number', { 'content-type': 'application/json' }, '42'],
  ['query not a string', { 'content-type': 'application/json' }, '{"query": 42}'],
  [
    'variables a string',
    { 'content-type': 'application/json' },
    '{"query": "{ __typename }", "variables": "x"}',
  ],
  [
    'variables an array',
    { 'content-type': 'application/json' },
    '{"query": "{ __typename }", "variables": [1]}',
  ],
  [
    'extensions a string',
    { 'content-type': 'application/json' },
    '{"query": "{ __typename }", "extensions": "x"}',
  ],
  ['unknown parameter', { 'content-type': 'application/json' }, '{"query": "{ __typename }", "evil": 1}'],
  [
    'Infinity from 1e999',
    { 'content-type': 'application/json' },
    `{"query": "query($c: Float) { search(input: { namespaces: [\\"${NS}\\"], query: \\"x\\", weights: { vector: $c } }) { hits { score } } }", "variables": {"c": 1e999}}`,
  ],
  [
    'invalid UTF-8',
    { 'content-type': 'application/json' },
    new Uint8Array([0x7b, 0x22, 0x71, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
  ],
  ['batch array', { 'content-type': 'application/json' }, '[{"query": "{ __typename }"}]'],
  ['empty batch', { 'content-type': 'application/json' }, '[]'],
  ['text/plain', { 'content-type': 'text/plain' }, '{"query": "{ __typename }"}'],
  ['xml', { 'content-type': 'application/xml' }, '<query>{ __typename }</query>'],
  ['no content type', {}, '{"query": "{ __typename }"}'],
  [
    'multipart',
    { 'content-type': 'multipart/form-data; boundary=x' },
    '--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":"{ __typename }"}\r\n--x--\r\n',
  ],
  ['form urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'query=%7B+__typename+%7D'],
  ['charset mismatch', { 'content-type': 'application/json; charset=utf-16' }, '{"query": "{ __typename }"}'],
  [
    'accept nothing we serve',
    { 'content-type': 'application/json', accept: 'image/png' },
    '{"query": "{ __typename }"}',
  ],
  ['syntax error', { 'content-type': 'application/json' }, '{"query": "{ entity(namespace: }"}'],
  [
    'many operations, none named',
    { 'content-type': 'application/json' },
    '{"query": "query A { __typename } query B { __typename }"}',
  ],
  [
    'unknown operationName',
    { 'content-type': 'application/json' },
    '{"query": "query A { __typename }", "operationName": "Z"}',
  ],
  ['subscription', { 'content-type': 'application/json' }, '{"query": "subscription { x }"}'],
];

function nest(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

interface Body {
  data?: unknown;
  errors?: { message?: unknown; extensions?: { code?: unknown } }[];
}

describe('bad input through the real HTTP server', () => {
  let gw: TestGateway;
  let token = '';
  let writerToken = '';
  let baseline = '';

  const snapshot = async () => {
    const rows = await gw.db.query(
      `/* test */ SELECT 'e' AS t, namespace, key AS id, title AS a, attributes::text AS b FROM entities WHERE namespace = 'other' OR key IN ('public', 'hidden')
       UNION ALL SELECT 'f', namespace, fact_id, predicate, status FROM facts WHERE namespace = 'other' OR subject IN ('public', 'hidden')
       UNION ALL SELECT 'o', namespace, observation_id, content, status FROM observations WHERE namespace = 'other' OR source_system = 'seed'
       UNION ALL SELECT 'c', namespace, node_key, text, ord::text FROM chunks WHERE namespace = 'other' OR node_key IN ('doc:seed', 'doc:hidden')
       UNION ALL SELECT 'a', namespace, audit_id::text, action, summary::text FROM audit_log
       ORDER BY 1, 2, 3, 4`,
    );
    return JSON.stringify(rows.rows);
  };

  /** Checks one response; returns its parsed body. */
  const check = async (label: string, res: Response, input = ''): Promise<Body> => {
    expect(res.status, `${label}: status`).toBeLessThan(500);
    const text = await res.text();
    expect(text.includes(OTHER_MARKER), `${label}: another namespace shows`).toBe(false);
    expect(text.includes(SCOPED_MARKER), `${label}: a hidden scope shows`).toBe(false);
    let body: Body;
    try {
      body = JSON.parse(text) as Body;
    } catch {
      throw new Error(`${label}: not JSON (status ${res.status}): ${text.slice(0, 200)}`);
    }
    expect(
      body !== null && typeof body === 'object' && !Array.isArray(body),
      `${label}: body is an object`,
    ).toBe(true);
    expect('data' in body || 'errors' in body, `${label}: has data or errors`).toBe(true);
    for (const error of body.errors ?? []) {
      expect(typeof error.message, `${label}: error message`).toBe('string');
      expect(typeof error.extensions?.code, `${label}: error code of "${String(error.message)}"`).toBe(
        'string',
      );
      expect(error.extensions?.code, `${label}: unexpected error "${String(error.message)}"`).not.toBe(
        'INTERNAL_SERVER_ERROR',
      );
      // A message may echo the caller's own input; anything else SQL- or stack-like is a leak.
      const message = input
        ? String(error.message).split(input.slice(0, 80)).join('')
        : String(error.message);
      expect(message, `${label}: leaks internals`).not.toMatch(/\bat .+:\d+:\d+|SELECT |INSERT |relation "/);
    }
    if (!body.errors) expect(body.data, `${label}: a result without errors has data`).toBeTruthy();
    // Batch items answer for themselves: a REJECTED item carries a code too.
    for (const results of findResults(body.data)) {
      for (const item of results) {
        if (item.status === 'REJECTED') {
          expect(typeof item.code, `${label}: rejected item code`).toBe('string');
          expect(item.code, `${label}: rejected item "${String(item.message)}"`).not.toMatch(/INTERNAL/);
        }
      }
    }
    return body;
  };

  const send = (body: string | Uint8Array | undefined, headers: Record<string, string>) =>
    fetch(gw.url, {
      method: 'POST',
      headers: {
        accept: 'application/graphql-response+json, application/json',
        authorization: `Bearer ${token}`,
        ...headers,
      },
      body: body as BodyInit | undefined,
    });

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'writer', read: ['*'], write: ['*'], scopes: ['*'] },
      { id: 'agent', read: [NS], write: [NS] },
    ]);
    token = written.tokens.agent!;
    writerToken = written.tokens.writer!;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    const as = { token: writerToken };
    for (const [ns, marker, scopes] of [
      [NS, 'public note', []],
      ['other', OTHER_MARKER, []],
    ] as const) {
      const seeded = await gw.gql(
        `mutation($ns: String!, $title: String!, $scopes: [String!]) {
           a: upsertEntities(namespace: $ns, entities: [{ key: "public", kind: "note", title: $title, scopes: $scopes },
             { key: "hidden", kind: "note", title: "${SCOPED_MARKER}", scopes: ["workspace:hidden"] }]) { accepted }
           b: assertFacts(namespace: $ns, facts: [{ subject: "public", predicate: "links", object: "hidden", scopes: ["workspace:hidden"] },
             { subject: "public", predicate: "mentions", object: "public" }]) { accepted }
           c: recordObservations(namespace: $ns, observations: [{ source: { system: "seed", externalId: "s1" }, kind: "note",
             occurredAt: "2024-01-01T00:00:00Z", content: $title }, { source: { system: "seed", externalId: "s2" }, kind: "note",
             occurredAt: "2024-01-02T00:00:00Z", content: "note ${SCOPED_MARKER}", scopes: ["workspace:hidden"] }]) { accepted }
           d: retainDocuments(namespace: $ns, documents: [{ key: "doc:seed", title: $title, content: $title },
             { key: "doc:hidden", title: "note", content: "note ${SCOPED_MARKER}", scopes: ["workspace:hidden"] }]) { accepted }
         }`,
        { ns, title: `${marker} note`, scopes },
        as,
      );
      expect(seeded.errors).toBeUndefined();
      expect(seeded.data).toEqual({
        a: { accepted: 2 },
        b: { accepted: 2 },
        c: { accepted: 2 },
        d: { accepted: 2 },
      });
    }
    baseline = await snapshot();
  });
  afterAll(async () => {
    await gw?.close();
  });

  for (const op of OPERATIONS) {
    it(`hostile strings in ${op.name}`, async () => {
      expect(missingRootFields(op.query), 'root fields the schema lacks').toEqual([]);
      for (const [label, value] of HOSTILE_STRINGS) {
        const res = await send(JSON.stringify({ query: op.query, variables: op.variables(value) }), {
          'content-type': 'application/json',
        });
        await check(`${op.name} ← ${label}`, res, value);
      }
    });
  }

  it('keys made of SQL metacharacters round-trip exactly (parameters, never string-built SQL)', async () => {
    for (const [label, value] of HOSTILE_STRINGS.slice(0, 6)) {
      const key = `k${value}`;
      const res = await gw.gql<{ upsertEntities: { accepted: number } }>(
        `mutation($k: String!) { upsertEntities(namespace: "${NS}", entities: [{ key: $k, kind: "note", title: $k }]) { accepted } }`,
        { k: key },
        { token },
      );
      expect(res.data?.upsertEntities.accepted, label).toBe(1);
      const back = await gw.gql(
        `query($k: String!) { entity(namespace: "${NS}", key: $k) { key title } }`,
        { k: key },
        { token },
      );
      expect(back.data, label).toEqual({ entity: { key, title: key } });
    }
  });

  it('wrongly typed variables, huge numbers, invalid dates and unknown enum values', async () => {
    for (const [label, query, variables] of TYPED_CASES) {
      expect(missingRootFields(query), label).toEqual([]);
      const res = await send(JSON.stringify({ query, variables }), { 'content-type': 'application/json' });
      await check(label, res);
    }
  });

  it('malformed bodies and wrong content types', async () => {
    for (const [label, headers, body] of RAW_CASES) {
      await check(label, await send(body, headers));
    }
    const get = await fetch(
      `${gw.url}?query=${encodeURIComponent('mutation { upsertEntities(namespace: "bad", entities: []) { accepted } }')}`,
      {
        headers: { accept: 'application/json', authorization: `Bearer ${token}` },
      },
    );
    const body = await check('mutation over GET', get);
    expect(body.errors?.length).toBeGreaterThan(0);
    const put = await fetch(gw.url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}` },
      body: '{}',
    });
    await check('PUT', put);
  });

  it('stays up, and what was written before is intact', async () => {
    expect((await fetch(gw.url.replace(/\/graphql$/, '/healthz'))).status).toBe(200);
    const res = await gw.gql(`{ entity(namespace: "${NS}", key: "public") { key title } }`, {}, { token });
    expect(res.data).toEqual({ entity: { key: 'public', title: 'public note note' } });
    expect(await snapshot()).toBe(baseline);
  });
});

function findResults(data: unknown): { status?: unknown; code?: unknown; message?: unknown }[][] {
  const found: { status?: unknown; code?: unknown; message?: unknown }[][] = [];
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'results' && Array.isArray(v)) found.push(v as never);
        else visit(v);
      }
    }
  };
  visit(data);
  return found;
}
