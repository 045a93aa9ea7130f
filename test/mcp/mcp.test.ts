import { request as httpRequest } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalId } from '../../src/global-id.js';
import { toolInputJsonSchema } from '../../src/mcp/json-schema.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { CONTEXT_LIMITS } from '../../src/modules/retrieval/context-service.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  STDIO_TEST_TIMEOUT_MS,
  callTool,
  callToolWithRawArguments,
  connectMcpHttp,
  connectMcpStdio,
  freshDatabaseEnv,
  resourceText,
} from '../helpers/mcp.js';
import { writeTokensFile } from '../helpers/principals.js';

const TOOL_NAMES = [
  'assert_facts',
  'explain_context',
  'get_context',
  'get_entity',
  'record_observations',
  'search_memory',
  'supersede_fact',
  'trace_provenance',
];

/**
 * Every tool once, as an agent would chain them: record what happened, assert and supersede a
 * fact, read the entity (now and as of before the change), compile a pack, search, follow an
 * item's provenance and explain the pack. The same journey runs on both transports.
 */
async function journey(client: Client, ns: string): Promise<void> {
  const listed = await client.listTools();
  expect(listed.tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);

  const recorded = await callTool(client, 'record_observations', {
    namespace: ns,
    observations: [
      {
        source: { system: 'chat', externalId: 'm1' },
        kind: 'message',
        occurredAt: '2024-05-01T10:00:00Z',
        content: 'Alice says the quokka project moves from Berlin to Paris in June.',
      },
    ],
  });
  expect(recorded.isError, recorded.text).toBe(false);
  expect(recorded.data).toMatchObject({ accepted: 1, rejected: 0, results: [{ status: 'CREATED' }] });
  const observationId = (recorded.data.results as { key: string }[])[0]!.key;

  const asserted = await callTool(client, 'assert_facts', {
    namespace: ns,
    facts: [
      {
        subject: 'alice',
        predicate: 'works_in',
        object: 'berlin',
        validFrom: '2024-01-01T00:00:00Z',
        observationIds: [observationId],
      },
    ],
  });
  expect(asserted.isError, asserted.text).toBe(false);
  const berlinFact = (asserted.data.results as { key: string; status: string }[])[0]!;
  expect(berlinFact.status).toBe('CREATED');

  const superseded = await callTool(client, 'supersede_fact', {
    namespace: ns,
    factId: berlinFact.key,
    by: { subject: 'alice', predicate: 'works_in', object: 'paris', validFrom: '2024-06-01T00:00:00Z' },
  });
  expect(superseded.isError, superseded.text).toBe(false);
  expect(superseded.data).toMatchObject({ accepted: 1, rejected: 0 });

  const now = await callTool(client, 'get_entity', { namespace: ns, key: 'alice' });
  expect(now.isError, now.text).toBe(false);
  expect((now.data.facts as { object: { key: string } }[]).map((f) => f.object.key)).toEqual(['paris']);
  const before = await callTool(client, 'get_entity', {
    namespace: ns,
    key: 'alice',
    asOf: '2024-03-01T00:00:00Z',
  });
  expect((before.data.facts as { object: { key: string } }[]).map((f) => f.object.key)).toEqual(['berlin']);

  const pack = await callTool(client, 'get_context', {
    namespaces: [ns],
    query: 'Where does alice work?',
    anchors: ['alice'],
    budgetTokens: 400,
    strategy: 'HYBRID',
  });
  expect(pack.isError, pack.text).toBe(false);
  expect(pack.text).toContain('paris');
  // The text blocks: the pack, then the ids and trace id (for clients that pass on text only).
  expect(pack.text).toContain(pack.data.text as string);
  expect(pack.text).toContain(pack.data.traceId as string);
  expect(pack.data.tokenEstimate as number).toBeLessThanOrEqual(400);
  const itemIds = pack.data.itemIds as string[];
  expect(itemIds.length).toBeGreaterThan(0);
  const traceId = pack.data.traceId as string;
  expect(traceId).toMatch(/\S/);

  const search = await callTool(client, 'search_memory', { namespaces: [ns], query: 'quokka project Paris' });
  expect(search.isError, search.text).toBe(false);
  expect(search.text).toContain('quokka');
  const hits = search.data.hits as { chunk: { id: string; text: string } }[];
  expect(hits.length).toBeGreaterThan(0);

  const provenance = await callTool(client, 'trace_provenance', { id: hits[0]!.chunk.id });
  expect(provenance.isError, provenance.text).toBe(false);
  const steps = provenance.data.steps as { kind: string }[];
  expect(steps.map((s) => s.kind)).toContain('observation');

  const explained = await callTool(client, 'explain_context', { namespace: ns, traceId });
  expect(explained.isError, explained.text).toBe(false);
  expect(explained.data.traceId).toBe(traceId);
  expect(JSON.stringify(explained.data.decisions)).toContain('INCLUDED');

  const resource = await client.readResource({ uri: `memgate://${ns}/entity/alice` });
  const entity = JSON.parse(resourceText(resource)) as { key: string; facts: unknown[] };
  expect(entity.key).toBe('alice');
  expect(entity.facts.length).toBeGreaterThan(0);
}

describe('MCP over Streamable HTTP at /mcp', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  const clients: Client[] = [];
  const as = async (who: string) => {
    const client = await connectMcpHttp(gw.url, tokens[who]);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'writer', read: ['acme'], write: ['acme'], scopes: ['*'], pii: true, admin: true },
      { id: 'reader', read: ['acme'] },
      { id: 'w1', read: ['acme'], scopes: ['workspace:w1'] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path, MEMGATE_MAX_LIST_SIZE: '50' });
    const seeded = await gw.gql(
      `mutation {
        upsertEntities(namespace: "acme", entities: [
          { key: "bob", kind: "person", title: "Bob", attributes: { email: "bob@example.com" } },
          { key: "sapphire-ent", kind: "person", title: "Secret sapphire", scopes: ["workspace:w1"] }
        ]) { rejected }
        retainDocuments(namespace: "acme", documents: [
          { key: "doc:handbook", title: "Handbook", content: "# Handbook\\n\\nQuokkas are welcome." }
        ]) { rejected }
      }`,
      {},
      { token: tokens.writer },
    );
    expect(seeded.errors).toBeUndefined();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await gw?.close();
  });

  it('runs every tool end to end with the SDK client', async () => {
    await journey(await as('writer'), 'acme');
  });

  it('lists a JSON Schema per tool, printed from the zod schemas the services validate with', async () => {
    const { tools } = await (await as('reader')).listTools();
    for (const tool of MCP_TOOLS) {
      const listed = tools.find((t) => t.name === tool.name)!;
      expect(listed.inputSchema, tool.name).toEqual(toolInputJsonSchema(tool.input));
      expect(listed.annotations?.readOnlyHint, tool.name).toBe(tool.readOnly);
    }
    const context = tools.find((t) => t.name === 'get_context')!.inputSchema as {
      properties: Record<string, { maximum?: number; anyOf?: { enum?: string[] }[] }>;
      required: string[];
    };
    expect(context.required).toEqual(['namespaces']);
    expect(context.properties.budgetTokens!.maximum).toBe(CONTEXT_LIMITS.maxBudget);
    expect(context.properties.strategy!.anyOf![0]!.enum).toContain('AUTO');
  });

  it('requires a token exactly as /graphql does', async () => {
    await expect(connectMcpHttp(gw.url)).rejects.toThrow(/UNAUTHENTICATED: Authentication required/);
    await expect(connectMcpHttp(gw.url, 'not-a-valid-token-at-all')).rejects.toThrow(
      /UNAUTHENTICATED: Invalid bearer token/,
    );
    const raw = await fetch(gw.url.replace('/graphql', '/mcp'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toContain('Bearer');
    expect(await raw.text()).toContain('UNAUTHENTICATED');
  });

  it('answers a forbidden call as a tool error with the FORBIDDEN code', async () => {
    const reader = await as('reader');
    const write = await callTool(reader, 'record_observations', {
      namespace: 'acme',
      observations: [
        { source: { system: 'chat' }, kind: 'message', occurredAt: '2024-05-01T00:00:00Z', content: 'x' },
      ],
    });
    expect(write.isError).toBe(true);
    expect(write.data.error).toMatchObject({ code: 'FORBIDDEN' });
    const read = await callTool(reader, 'get_context', { namespaces: ['elsewhere'], query: 'anything' });
    expect(read.isError).toBe(true);
    expect(read.text).toBe('FORBIDDEN: You may not read namespace "elsewhere".');
  });

  it('answers bad input with BAD_USER_INPUT and the issues, never a stack trace', async () => {
    const reader = await as('reader');
    const budget = await callTool(reader, 'get_context', { namespaces: ['acme'], budgetTokens: 0 });
    expect(budget.isError).toBe(true);
    expect(budget.data.error).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(budget.text).toContain('budgetTokens');
    const wrongType = await callTool(reader, 'get_entity', { namespace: 'acme', key: 7 });
    expect(wrongType.data.error).toMatchObject({ code: 'BAD_USER_INPUT' });
    const unknown = await callTool(reader, 'get_entity', { namespace: 'acme', key: 'bob', colour: 'red' });
    expect(unknown.text).toBe('BAD_USER_INPUT: Unknown argument for get_entity: colour.');
    for (const answer of [budget, wrongType, unknown]) expect(answer.text).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it('answers arguments nested thousands deep with BAD_USER_INPUT, never a stack overflow', async () => {
    // Built as text: JSON.stringify itself (and the SDK's client) cannot go this deep.
    const deep = `${'{"a":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    const call = (name: string, args: string) =>
      fetch(gw.url.replace(/\/graphql$/, '/mcp'), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.reader}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`,
      });
    const raw = await call('get_entity', `{"namespace":"acme","key":"bob","extra":${deep}}`);
    expect(raw.status).toBe(400);
    const text = await raw.text();
    expect(text).not.toMatch(/call stack|RangeError/i);
    expect(text).toMatch(/BAD_USER_INPUT: .*nested more than \d+ levels deep/);
    // A shallow call still works after it.
    const fine = await call('get_entity', '{"namespace":"acme","key":"bob"}');
    expect(fine.status).toBe(200);
    expect(await fine.text()).toContain('Bob');
  });

  it('answers a hidden row exactly like an absent one', async () => {
    const reader = await as('reader');
    const ask = async (key: string) =>
      JSON.stringify(await callTool(reader, 'get_entity', { namespace: 'acme', key })).replaceAll(
        key,
        '<key>',
      );
    const hidden = await ask('sapphire-ent');
    expect(hidden).toContain('NOT_FOUND');
    expect(hidden).toBe(await ask('no-such-entity'));
    const w1 = await callTool(await as('w1'), 'get_entity', { namespace: 'acme', key: 'sapphire-ent' });
    expect(w1.data.title).toBe('Secret sapphire');
    await expect(reader.readResource({ uri: 'memgate://acme/entity/sapphire-ent' })).rejects.toThrow(
      /Resource not found/,
    );
  });

  it('masks personal data for principals without pii, as GraphQL does', async () => {
    const masked = await callTool(await as('reader'), 'get_entity', { namespace: 'acme', key: 'bob' });
    expect(masked.data.attributes).toEqual({ email: '[email]' });
    const clear = await callTool(await as('writer'), 'get_entity', { namespace: 'acme', key: 'bob' });
    expect(clear.data.attributes).toEqual({ email: 'bob@example.com' });
  });

  it('applies the GraphQL limits: a list over MEMGATE_MAX_LIST_SIZE is LIMIT_EXCEEDED', async () => {
    const observations = Array.from({ length: 51 }, (_, i) => ({
      source: { system: 'chat', externalId: `bulk-${i}` },
      kind: 'message',
      occurredAt: '2024-05-01T00:00:00Z',
      content: `message ${i}`,
    }));
    const answer = await callTool(await as('writer'), 'record_observations', {
      namespace: 'acme',
      observations,
    });
    expect(answer.isError).toBe(true);
    expect(answer.data.error).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(answer.text).toBe('LIMIT_EXCEEDED: observations: 51 items, at most 50 allowed.');
  });

  it('audits unmasked personal data served through a tool, like a GraphQL read', async () => {
    await callTool(await as('writer'), 'get_entity', { namespace: 'acme', key: 'bob' });
    const audit = await gw.gql<{ auditTrail: { edges: { node: { target: string | null } }[] } }>(
      '{ auditTrail(namespace: "acme", actions: ["pii_access"]) { edges { node { target } } } }',
      {},
      { token: tokens.writer },
    );
    expect(audit.errors).toBeUndefined();
    expect(audit.data!.auditTrail.edges.map((e) => e.node.target)).toContain('McpGetEntity');
  });

  it('get_entity gives the attributes as of a time', async () => {
    const upsert = (plan: string) =>
      gw.gql(
        'mutation($e: [EntityInput!]!) { upsertEntities(namespace: "acme", entities: $e) { rejected } }',
        { e: [{ key: 'carol', kind: 'person', title: 'Carol', attributes: { plan } }] },
        { token: tokens.writer },
      );
    await upsert('basic');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await upsert('pro');
    const reader = await as('reader');
    const then = await callTool(reader, 'get_entity', { namespace: 'acme', key: 'carol', asOf: between });
    expect(then.data.attributes).toEqual({ plan: 'basic' });
    const now = await callTool(reader, 'get_entity', { namespace: 'acme', key: 'carol' });
    expect(now.data.attributes).toEqual({ plan: 'pro' });
  });

  it('serves entities and source documents as resources', async () => {
    const reader = await as('reader');
    const { resourceTemplates } = await reader.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'memgate://{namespace}/entity/{key}',
      'memgate://{namespace}/source/{key}',
    ]);
    const doc = await reader.readResource({ uri: 'memgate://acme/source/doc%3Ahandbook' });
    expect(doc.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect(resourceText(doc)).toContain('Quokkas are welcome.');
  });
});

describe('MCP over HTTP in local mode (no tokens file)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const post = (headers: Record<string, string>) =>
    fetch(gw.url.replace('/graphql', '/mcp'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('serves loopback clients without a token', async () => {
    const client = await connectMcpHttp(gw.url);
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    } finally {
      await client.close();
    }
  });

  it('refuses a web page of another origin (DNS rebinding) with 403', async () => {
    const refused = await post({ origin: 'http://attacker.example' });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('FORBIDDEN');
    // fetch does not let a caller set Host; a raw request does, as a rebound browser would send it.
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        gw.url.replace('/graphql', '/mcp'),
        {
          method: 'POST',
          headers: { host: 'attacker.example', 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    });
    expect(rebound).toBe(403);
  });
});

describe('MCP over stdio (npx memgate mcp)', { timeout: STDIO_TEST_TIMEOUT_MS }, () => {
  it('runs every tool end to end in local mode', async () => {
    const server = await connectMcpStdio();
    try {
      await journey(server.client, 'desk');
    } finally {
      await server.close();
    }
  });

  it('acts as the principal of MEMGATE_TOKEN: refuses what it may not do, hides what it may not see', async () => {
    // The agent may write `desk` and holds workspace:w2 only; a curator holding every scope
    // records a note for w1 there, which the agent can neither write nor read.
    const written = writeTokensFile([
      { id: 'agent', read: ['desk'], write: ['desk'], scopes: ['workspace:w2'] },
      { id: 'curator', read: ['desk'], write: ['desk'], scopes: ['*'] },
    ]);
    const note = (scope: string) => ({
      source: { system: 'notes', externalId: scope },
      kind: 'note',
      occurredAt: '2024-05-01T00:00:00Z',
      content: `a note for ${scope}`,
      scopes: [scope],
    });
    const database = await freshDatabaseEnv();
    const asPrincipal = (id: 'agent' | 'curator') =>
      connectMcpStdio(
        { MEMGATE_TOKENS_FILE: written.path, MEMGATE_TOKEN: written.tokens[id]! },
        undefined,
        database,
      );
    const curator = await asPrincipal('curator');
    let hidden: string;
    try {
      const byCurator = await callTool(curator.client, 'record_observations', {
        namespace: 'desk',
        observations: [note('workspace:w1')],
      });
      expect(byCurator.data).toMatchObject({ accepted: 1, rejected: 0 });
      hidden = (byCurator.data.results as { key: string }[])[0]!.key;
    } finally {
      await curator.close();
    }
    const server = await asPrincipal('agent');
    try {
      const forbidden = await callTool(server.client, 'assert_facts', {
        namespace: 'elsewhere',
        facts: [{ subject: 'a', predicate: 'knows', object: 'b' }],
      });
      expect(forbidden.text).toBe('FORBIDDEN: You may not write namespace "elsewhere".');
      const recorded = await callTool(server.client, 'record_observations', {
        namespace: 'desk',
        observations: [
          note('workspace:w2'),
          { ...note('workspace:w1'), source: { system: 'notes', externalId: 'again' } },
        ],
      });
      // A write may only assign scopes its principal holds.
      expect(recorded.data).toMatchObject({ accepted: 1, rejected: 1 });
      const results = recorded.data.results as { key: string; code?: string }[];
      expect(results[1]!.code).toBe('FORBIDDEN');
      const own = results[0]!.key;
      const provenance = async (id: string) => {
        const answer = await callTool(server.client, 'trace_provenance', {
          id: globalId('Observation', 'desk', id),
        });
        return JSON.stringify(answer).replaceAll(globalId('Observation', 'desk', id), '<id>');
      };
      expect(await provenance(own)).toContain('notes#workspace:w2');
      const absent = await provenance('obs-000000000000000000000000');
      expect(absent).toContain('NOT_FOUND');
      expect(await provenance(hidden)).toBe(absent);
    } finally {
      await server.close();
      await database.drop();
    }
  });

  it('answers arguments nested thousands deep with a BAD_USER_INPUT tool error and keeps serving', async () => {
    const server = await connectMcpStdio();
    try {
      const deep = `${'{"a":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
      // A short timeout turns a message dropped unanswered into a failure rather than a hang.
      // `data` is free-form JSON, so nothing refuses it before it reaches the gateway.
      const observation = `{"source":{"system":"chat","externalId":"deep"},"kind":"message","occurredAt":"2024-05-01T10:00:00Z","content":"deep","data":${deep}}`;
      const answer = await callToolWithRawArguments(
        server.client,
        'record_observations',
        `{"namespace":"desk","observations":[${observation}]}`,
        15_000,
      );
      expect(answer.isError).toBe(true);
      expect(answer.data.error).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(answer.text).toMatch(/^BAD_USER_INPUT: .*nested more than \d+ levels deep/);
      expect(answer.text).not.toMatch(/call stack|RangeError/i);
      // The process is still up and a shallow call still answers.
      const fine = await callTool(server.client, 'get_entity', { namespace: 'desk', key: 'bob' });
      expect(fine.text).not.toMatch(/INTERNAL_SERVER_ERROR/);
      expect(server.stderr()).not.toMatch(/call stack/i);
    } finally {
      await server.close();
    }
  });

  it('does not start without a valid token when a tokens file is configured', async () => {
    const written = writeTokensFile([{ id: 'reader', read: ['desk'] }]);
    await expect(connectMcpStdio({ MEMGATE_TOKENS_FILE: written.path })).rejects.toThrow();
  });
});
