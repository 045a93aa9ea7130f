import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { STDIO_TEST_TIMEOUT_MS, callTool, connectMcpStdio } from '../helpers/mcp.js';
import { writeTokensFile } from '../helpers/principals.js';

/** The JSON block that follows `<!-- mcp-config:NAME -->` in the README. */
function readmeConfig(name: string): { mcpServers: { memgate: Record<string, unknown> } } {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const match = new RegExp(`<!-- mcp-config:${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(readme);
  if (!match) throw new Error(`README has no mcp-config:${name} block`);
  return JSON.parse(match[1]!) as { mcpServers: { memgate: Record<string, unknown> } };
}

describe('README: the MCP client configurations work as written', { timeout: STDIO_TEST_TIMEOUT_MS }, () => {
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    const written = writeTokensFile([{ id: 'agent', read: ['demo'], write: ['demo'] }]);
    token = written.tokens.agent!;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('stdio: the command and arguments start the server (the repository in place of /path/to/memgate)', async () => {
    const server = readmeConfig('stdio').mcpServers.memgate as {
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    const here = (s: string) => s.replaceAll('/path/to/memgate', process.cwd());
    expect(server.env.MEMGATE_DATA_DIR).toBe('/path/to/memgate/.memgate');
    // The data directory is a fresh one (connectMcpStdio), not the repository's own.
    const { MEMGATE_DATA_DIR: _dir, ...env } = server.env;
    const stdio = await connectMcpStdio(env, { command: server.command, args: server.args.map(here) });
    try {
      const { tools } = await stdio.client.listTools();
      expect(tools.map((t) => t.name)).toContain('get_context');
      const pack = await callTool(stdio.client, 'get_context', { namespaces: ['demo'], query: 'anything' });
      expect(pack.isError, pack.text).toBe(false);
    } finally {
      await stdio.close();
    }
  });

  it('relay: memgate mcp --url with MEMGATE_TOKEN reaches the running gateway over stdio', async () => {
    const server = readmeConfig('relay').mcpServers.memgate as {
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    const port = new URL(gw.url).port;
    const args = server.args.map((a) =>
      a.replaceAll('/path/to/memgate', process.cwd()).replace('127.0.0.1:4000', `127.0.0.1:${port}`),
    );
    expect(args).toContain(`http://127.0.0.1:${port}`);
    const env = { MEMGATE_TOKEN: server.env.MEMGATE_TOKEN!.replace('<token>', token) };
    const stdio = await connectMcpStdio(env, { command: server.command, args });
    try {
      const written = await callTool(stdio.client, 'assert_facts', {
        namespace: 'demo',
        facts: [{ subject: 'bob', predicate: 'works_at', object: 'acme' }],
      });
      expect(written.data, written.text).toMatchObject({ accepted: 1 });
      // Written through the gateway, so it reads it back over /graphql.
      const read = await gw.gql<{ entity: { key: string } | null }>(
        '{ entity(namespace: "demo", key: "bob") { key } }',
        {},
        { token },
      );
      expect(read.data?.entity).toEqual({ key: 'bob' });
    } finally {
      await stdio.close();
    }
  });

  it('http: the URL and header reach /mcp with a token', async () => {
    const server = readmeConfig('http').mcpServers.memgate as {
      type: string;
      url: string;
      headers: Record<string, string>;
    };
    expect(server.type).toBe('http');
    const url = new URL(server.url);
    url.port = new URL(gw.url).port;
    const headers = Object.fromEntries(
      Object.entries(server.headers).map(([k, v]) => [k, v.replace('<token>', token)]),
    );
    const client = new Client({ name: 'readme', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    try {
      const written = await callTool(client, 'assert_facts', {
        namespace: 'demo',
        facts: [{ subject: 'alice', predicate: 'works_at', object: 'acme' }],
      });
      expect(written.data).toMatchObject({ accepted: 1 });
    } finally {
      await client.close();
    }
  });
});
