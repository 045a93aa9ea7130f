import { mkdtempSync } from 'node:fs';
import { type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { killGatewayProcesses, startGatewayProcess } from '../helpers/gateway-process.js';
import {
  STDIO_TEST_TIMEOUT_MS,
  callTool,
  connectMcpHttp,
  connectMcpStdio,
  mcpCommand,
  spawnMcpStdio,
} from '../helpers/mcp.js';
import { writeTokensFile } from '../helpers/principals.js';
import { openFromTemplate } from '../helpers/test-database.js';

/**
 * What real MCP clients send and need to read: numbers and booleans typed as text, errors in
 * the tool's own terms, a clear word when the embedded folder is held by a running gateway
 * (and the relay through it), an `initialize` that does not wait for the database, titles as of
 * a time, and search text whose sections say what they hold.
 */

/** Words of the GraphQL operation behind a tool, which a tool's error must never show. */
const OPERATION_WORDS = /\$input|Variable|input\.|GraphQL|cannot represent|at "/;

/** Records two chat messages and the fact history the checks below read. */
async function seed(client: Client, ns: string): Promise<void> {
  const recorded = await callTool(client, 'record_observations', {
    namespace: ns,
    observations: ['m1', 'm2'].map((id, i) => ({
      source: { system: 'chat', stream: 'general', externalId: id },
      kind: 'message',
      occurredAt: `2024-05-0${i + 1}T10:00:00Z`,
      content: i === 0 ? 'Alice: the quokka release is blocked.' : 'Bob: the quokka release ships on Friday.',
    })),
  });
  expect(recorded.data, recorded.text).toMatchObject({ accepted: 2 });
  const asserted = await callTool(client, 'assert_facts', {
    namespace: ns,
    facts: [{ subject: 'alice', predicate: 'works_in', object: 'berlin', validFrom: '2024-01-01T00:00:00Z' }],
  });
  const factId = (asserted.data.results as { key: string }[])[0]!.key;
  const superseded = await callTool(client, 'supersede_fact', {
    namespace: ns,
    factId,
    by: { subject: 'alice', predicate: 'works_in', object: 'paris', validFrom: '2024-06-01T00:00:00Z' },
  });
  expect(superseded.data, superseded.text).toMatchObject({ accepted: 1 });
}

/** Every argument check, as the same client calls would go over either transport. */
async function argumentsAsClientsSendThem(client: Client, ns: string): Promise<void> {
  // Integers and booleans as text, where the schema wants only a number or a boolean there.
  const one = await callTool(client, 'search_memory', { namespaces: [ns], query: 'quokka release', k: '1' });
  expect(one.isError, one.text).toBe(false);
  expect(one.data.hits).toHaveLength(1);
  const budget = await callTool(client, 'get_context', {
    namespaces: [ns],
    query: 'quokka',
    budgetTokens: '300',
  });
  expect(budget.isError, budget.text).toBe(false);
  expect(budget.data.budget).toMatchObject({ maxTokens: 300 });
  const history = await callTool(client, 'get_entity', {
    namespace: ns,
    key: 'alice',
    includeHistory: 'true',
  });
  expect(history.isError, history.text).toBe(false);
  expect(history.data.facts).toHaveLength(2);
  const current = await callTool(client, 'get_entity', {
    namespace: ns,
    key: 'alice',
    includeHistory: 'false',
    first: '5',
  });
  expect(current.data.facts).toHaveLength(1);
  const firstOnly = await callTool(client, 'get_entity', {
    namespace: ns,
    key: 'alice',
    includeHistory: true,
    first: '1',
  });
  expect(firstOnly.data.facts).toHaveLength(1);

  // A string field keeps its text: the key "2" is looked up as "2", not refused as a number.
  const textKey = await callTool(client, 'get_entity', { namespace: ns, key: '2' });
  expect(textKey.text).toBe(`NOT_FOUND: No entity "2" in namespace "${ns}".`);

  // What is not a clean integer or boolean stays an error, named by argument, saying what came.
  const cases: [string, Record<string, unknown>, string][] = [
    ['search_memory', { namespaces: [ns], query: 'q', k: '2.5' }, 'k: expected an integer, got "2.5"'],
    ['search_memory', { namespaces: [ns], query: 'q', k: 'two' }, 'k: expected an integer, got "two"'],
    ['search_memory', { namespaces: [ns], query: 'q', k: 0 }, 'k: expected an integer at least 1, got 0'],
    [
      'get_entity',
      { namespace: ns, key: 'alice', includeHistory: 'yes' },
      'includeHistory: expected true or false, got "yes"',
    ],
    ['get_entity', { namespace: ns }, 'key: expected a string, got nothing'],
    ['get_entity', { namespace: ns, key: 7 }, 'key: expected a string, got 7'],
    [
      'get_entity',
      { namespace: ns, key: 'alice', asOf: 'yesterday' },
      'asOf: expected an ISO 8601 date-time with a time zone (e.g. 2024-05-01T10:00:00Z), got "yesterday"',
    ],
    [
      'record_observations',
      {
        namespace: ns,
        observations: [
          { source: { system: 'chat' }, kind: 'message', occurredAt: '2024-05-01', colour: 'red' },
        ],
      },
      'observations[0].colour: unknown field (the fields here: source, kind, occurredAt, actor, subject, ' +
        'scopes, content, data, assertions, provenance); ' +
        'observations[0].occurredAt: expected an ISO 8601 date-time with a time zone (e.g. 2024-05-01T10:00:00Z), got "2024-05-01"',
    ],
  ];
  for (const [tool, args, issues] of cases) {
    const answer = await callTool(client, tool, args);
    expect(answer.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
    expect(answer.text).toBe(`BAD_USER_INPUT: Invalid arguments for ${tool}: ${issues}.`);
    expect(answer.data.error).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(answer.text).not.toMatch(OPERATION_WORDS);
  }
  const strategy = await callTool(client, 'get_context', { namespaces: [ns], strategy: 'FAST' });
  expect(strategy.text).toMatch(
    /^BAD_USER_INPUT: Invalid arguments for get_context: strategy: expected one of HYBRID, .*AUTO.*, got "FAST"\.$/,
  );
  expect(strategy.data.error).toMatchObject({
    code: 'BAD_USER_INPUT',
    issues: [{ path: 'strategy', message: expect.stringContaining('got "FAST"') }],
  });
}

describe('MCP over HTTP: arguments, titles as of a time, section labels', () => {
  let gw: TestGateway;
  let token: string;
  const clients: Client[] = [];
  const connect = async () => {
    const client = await connectMcpHttp(gw.url, token);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const written = writeTokensFile([{ id: 'agent', read: ['*'], write: ['*'], scopes: ['*'], pii: true }]);
    token = written.tokens.agent!;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await gw?.close();
  });

  it('reads numbers and booleans sent as text where the schema is unambiguous, and words errors by argument', async () => {
    const client = await connect();
    await seed(client, 'args');
    await argumentsAsClientsSendThem(client, 'args');
  });

  it('get_entity with asOf gives the title and attributes of then, not of today', async () => {
    const upsert = (title: string, plan: string, validFrom: string) =>
      gw.gql(
        'mutation($e: [EntityInput!]!) { upsertEntities(namespace: "asof", entities: $e) { rejected } }',
        { e: [{ key: 'carol', kind: 'person', title, attributes: { plan }, validFrom }] },
        { token },
      );
    expect((await upsert('Carol Smith', 'basic', '2024-01-01T00:00:00Z')).data).toEqual({
      upsertEntities: { rejected: 0 },
    });
    await upsert('Carol Jones', 'pro', '2024-07-01T00:00:00Z');
    const client = await connect();
    const then = await callTool(client, 'get_entity', {
      namespace: 'asof',
      key: 'carol',
      asOf: '2024-03-01T00:00:00Z',
    });
    expect(then.isError, then.text).toBe(false);
    expect(then.data).toMatchObject({
      title: 'Carol Smith',
      currentTitle: 'Carol Jones',
      attributes: { plan: 'basic' },
      version: { validFrom: '2024-01-01T00:00:00.000Z', validTo: '2024-07-01T00:00:00.000Z' },
    });
    const now = await callTool(client, 'get_entity', { namespace: 'asof', key: 'carol' });
    expect(now.data).toMatchObject({ title: 'Carol Jones', attributes: { plan: 'pro' } });
    expect(now.data).not.toHaveProperty('currentTitle');
    const before = await callTool(client, 'get_entity', {
      namespace: 'asof',
      key: 'carol',
      asOf: '2023-01-01T00:00:00Z',
    });
    expect(before.data).toMatchObject({
      title: null,
      attributes: null,
      version: null,
      currentTitle: 'Carol Jones',
    });
  });

  it('search_memory and ask list chat messages under RECENT OBSERVATIONS and documents under DOCUMENTS, as a pack does', async () => {
    const client = await connect();
    await seed(client, 'labels');
    const retained = await gw.gql(
      `mutation { retainDocuments(namespace: "labels", documents: [
        { key: "doc:release", title: "Release guide", content: "# Release\\n\\nA quokka release needs two approvals." }
      ]) { rejected } }`,
      {},
      { token },
    );
    expect(retained.errors).toBeUndefined();

    const search = await callTool(client, 'search_memory', {
      namespaces: ['labels'],
      query: 'quokka release',
      k: 5,
    });
    expect(search.isError, search.text).toBe(false);
    const asked = await gw.gql<{ ask: { answer: string; synthesized: boolean } }>(
      'query { ask(input: { namespaces: ["labels"], question: "quokka release", k: 5 }) { answer synthesized } }',
      {},
      { token },
    );
    expect(asked.errors).toBeUndefined();
    // No model is configured: ask answers with the context it found, as it would prompt a model.
    expect(asked.data!.ask.synthesized).toBe(false);
    const pack = await callTool(client, 'get_context', { namespaces: ['labels'], query: 'quokka release' });
    for (const text of [search.text, asked.data!.ask.answer, pack.text]) {
      expect(sectionOf(text, 'Alice: the quokka release is blocked.')).toBe('## RECENT OBSERVATIONS');
      expect(sectionOf(text, 'Bob: the quokka release ships on Friday.')).toBe('## RECENT OBSERVATIONS');
      expect(sectionOf(text, 'A quokka release needs two approvals.')).toBe('## DOCUMENTS');
    }
  });
});

/** The section header a line of the rendered text stands under. */
function sectionOf(text: string, needle: string): string | undefined {
  const at = text.indexOf(needle);
  expect(at, `"${needle}" in:\n${text}`).toBeGreaterThanOrEqual(0);
  return text
    .slice(0, at)
    .split('\n')
    .filter((line) => line.startsWith('## '))
    .pop();
}

describe('MCP over stdio: arguments as clients send them', { timeout: STDIO_TEST_TIMEOUT_MS }, () => {
  it('reads numbers and booleans sent as text and words errors by argument', async () => {
    const server = await connectMcpStdio();
    try {
      await seed(server.client, 'desk');
      await argumentsAsClientsSendThem(server.client, 'desk');
    } finally {
      await server.close();
    }
  });
});

/** `memgate mcp` with its stderr kept, whether or not its initialize succeeds. */
function spawnMcp(args: string[], env: Record<string, string>) {
  return spawnMcpStdio(mcpCommand(...args), env);
}

/** A fresh embedded data folder unpacked from the migrated template. */
async function embeddedDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memgate-mcp-held-'));
  const db = await openFromTemplate(join(dataDir, 'pgdata'));
  await db.close();
  return dataDir;
}

describe('memgate mcp beside a running gateway', { timeout: STDIO_TEST_TIMEOUT_MS }, () => {
  afterEach(() => killGatewayProcesses());

  it('names the process holding the folder and the --url way, on stderr and as the initialize error; --url works', async () => {
    const dataDir = await embeddedDataDir();
    const { child, url } = await startGatewayProcess({ MEMGATE_DATA_DIR: dataDir });
    const base = url.replace(/\/graphql$/, '');

    const direct = spawnMcp([], { MEMGATE_DATA_DIR: dataDir });
    const refused = await direct.connect().then(
      () => null,
      (error: Error) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    const said = `the data folder ${join(dataDir, 'pgdata')} is in use by memgate process ${child.pid} (memgate serve, started `;
    for (const text of [refused!.message, direct.stderr()]) {
      expect(text).toContain(said);
      expect(text).toContain(`memgate mcp --url ${base}`);
      expect(text).not.toMatch(/Connection closed|\n\s+at /);
    }
    await direct.close();

    // Through the gateway: its tools, its argument checks, its database.
    const relayed = spawnMcp(['--url', base], {});
    await relayed.connect();
    try {
      expect((await relayed.client.listTools()).tools.map((t) => t.name)).toContain('get_context');
      await seed(relayed.client, 'held');
      const one = await callTool(relayed.client, 'search_memory', {
        namespaces: ['held'],
        query: 'quokka',
        k: '1',
      });
      expect(one.isError, one.text).toBe(false);
      expect(one.data.hits).toHaveLength(1);
      const bad = await callTool(relayed.client, 'get_entity', {
        namespace: 'held',
        key: 'alice',
        first: '2.5',
      });
      expect(bad.text).toBe(
        'BAD_USER_INPUT: Invalid arguments for get_entity: first: expected an integer, got "2.5".',
      );
    } finally {
      await relayed.close();
    }
    // What went through the relay is in the gateway's database.
    const read = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ entity(namespace: "held", key: "alice") { key } }' }),
    });
    expect(await read.json()).toEqual({ data: { entity: { key: 'alice' } } });
  });
});

describe('memgate mcp --url against a gateway with tokens', { timeout: STDIO_TEST_TIMEOUT_MS }, () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    const written = writeTokensFile([{ id: 'agent', read: ['relay'], write: ['relay'] }]);
    token = written.tokens.agent!;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('presents MEMGATE_TOKEN (or --token) and passes the gateway refusals on', async () => {
    const base = gw.url.replace(/\/graphql$/, '');
    const relayed = spawnMcp(['--url', `${base}/mcp`], { MEMGATE_TOKEN: token });
    await relayed.connect();
    try {
      const forbidden = await callTool(relayed.client, 'get_entity', { namespace: 'elsewhere', key: 'x' });
      expect(forbidden.text).toBe('FORBIDDEN: You may not read namespace "elsewhere".');
    } finally {
      await relayed.close();
    }
    const withFlag = spawnMcp(['--url', gw.url, '--token', token], {});
    await withFlag.connect();
    await withFlag.close();

    const anonymous = spawnMcp(['--url', base], {});
    await expect(anonymous.connect()).rejects.toThrow(/UNAUTHENTICATED: Authentication required/);
    await anonymous.close();

    const port = await closedPort();
    const nowhere = spawnMcp(['--url', `http://127.0.0.1:${port}`], {});
    await expect(nowhere.connect()).rejects.toThrow(
      new RegExp(`cannot reach the gateway at http://127\\.0\\.0\\.1:${port}/mcp \\(ECONNREFUSED\\)`),
    );
    expect(nowhere.stderr()).toContain('cannot reach the gateway');
    await nowhere.close();
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('memgate mcp start-up', { timeout: STDIO_TEST_TIMEOUT_MS }, () => {
  it('answers initialize and lists its tools while the database has not answered yet', async () => {
    // A "database" that accepts connections and never says a word.
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const mcp = spawnMcp([], {
      DATABASE_URL: `postgres://memgate@127.0.0.1:${port}/memgate`,
      MEMGATE_DATA_DIR: mkdtempSync(join(tmpdir(), 'memgate-mcp-silent-')),
    });
    try {
      await mcp.connect();
      expect((await mcp.client.listTools()).tools).toHaveLength(8);
      // It did set out to open the database after the handshake, and is still waiting for it.
      await vi.waitFor(() => expect(held.length).toBeGreaterThan(0), { timeout: 60_000 });
    } finally {
      await mcp.close();
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it('answers a tool call with UNAVAILABLE and the reason when the database cannot be opened', async () => {
    const port = await closedPort();
    const mcp = spawnMcp([], {
      DATABASE_URL: `postgres://memgate@127.0.0.1:${port}/memgate`,
      MEMGATE_DATA_DIR: mkdtempSync(join(tmpdir(), 'memgate-mcp-refused-')),
    });
    await mcp.connect();
    try {
      const answer = await callTool(mcp.client, 'get_entity', { namespace: 'desk', key: 'alice' });
      expect(answer.isError).toBe(true);
      expect(answer.data.error).toMatchObject({ code: 'UNAVAILABLE' });
      expect(answer.text).toMatch(
        /^UNAVAILABLE: memgate mcp: the database could not be opened: .*ECONNREFUSED/,
      );
      expect(mcp.stderr()).toContain('the database could not be opened');
    } finally {
      await mcp.close();
    }
  });
});
