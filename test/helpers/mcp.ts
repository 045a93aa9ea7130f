import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { nativeTemplateName, openFromTemplate, TEST_EMBEDDING } from './test-database.js';

/** The SDK's own client on a gateway's /mcp, presenting `token` when given. */
export async function connectMcpHttp(graphqlUrl: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'memgate-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(graphqlUrl.replace(/\/graphql$/, '/mcp')), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  return client;
}

/** A child process starts tsx, opens its database and loads the embedder: slow on a busy machine. */
export const STDIO_TEST_TIMEOUT_MS = 180_000;

/**
 * `memgate mcp` from the sources (as the other tests read them; bin/memgate.js would run a
 * build that may be older), as `args` after `mcp`.
 */
export function mcpCommand(...args: string[]): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', join(process.cwd(), 'src', 'cli.ts'), 'mcp', ...args],
  };
}

/**
 * `memgate mcp` as a child process on a database of its own (a fresh PGlite directory, or a
 * fresh native database from the test template when DATABASE_URL is set), driven over stdio.
 */
export async function connectMcpStdio(
  env: Record<string, string> = {},
  command: { command: string; args: string[] } = mcpCommand(),
  /** A database another server used before (freshDatabaseEnv); the caller drops it. */
  shared?: McpDatabase,
): Promise<{ client: Client; stderr: () => string; close(): Promise<void> }> {
  const database = shared ?? (await freshDatabaseEnv());
  const child = spawnMcpStdio(command, { ...database.env, ...env });
  await child.connect();
  return {
    client: child.client,
    stderr: child.stderr,
    async close() {
      await child.close();
      if (!shared) await database.drop();
    },
  };
}

/** `memgate mcp` spawned, its stderr kept, not yet connected: a test may expect the handshake to fail. */
export function spawnMcpStdio(command: { command: string; args: string[] }, env: Record<string, string>) {
  const transport = new StdioClientTransport({
    ...command,
    env: {
      PATH: process.env.PATH ?? '',
      MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
      MEMGATE_LOG_LEVEL: 'warn',
      ...env,
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'memgate-test', version: '1.0.0' });
  return {
    client,
    connect: () => client.connect(transport),
    stderr: () => stderr,
    close: () => client.close(),
  };
}

export interface McpDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A database of its own for `memgate mcp` children: a fresh PGlite directory or native database. */
export async function freshDatabaseEnv(): Promise<McpDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memgate-mcp-'));
  const url = process.env.DATABASE_URL;
  if (!url) {
    // Unpacked from the migrated test template, so the child skips initdb and migrations.
    const db = await openFromTemplate(join(dataDir, 'pgdata'));
    await db.close();
    return { env: { MEMGATE_DATA_DIR: dataDir }, drop: async () => {} };
  }
  const name = `memgate_mcp_${Math.random().toString(16).slice(2, 14)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${nativeTemplateName()}`);
  await admin.end();
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    env: { MEMGATE_DATA_DIR: dataDir, DATABASE_URL: target.toString() },
    async drop() {
      const dropper = new pg.Client({ connectionString: url });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

/** A tool call's structured answer, or its coded error. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; data: Record<string, unknown>; text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return {
    isError: result.isError === true,
    data: (result.structuredContent ?? {}) as Record<string, unknown>,
    text,
  };
}

/**
 * A tool call over stdio whose arguments are sent as the given JSON text, verbatim: the SDK's
 * client serialises with JSON.stringify, which overflows its own stack long before the nesting
 * some tests need. The answer still comes back through the client, matched to the request id.
 */
export async function callToolWithRawArguments(
  client: Client,
  name: string,
  argumentsJson: string,
  timeoutMs: number,
): Promise<{ isError: boolean; data: Record<string, unknown>; text: string }> {
  const transport = client.transport as StdioClientTransport;
  const stdin = (transport as unknown as { _process?: ChildProcess })._process?.stdin;
  if (!stdin) throw new Error('the stdio server is not running');
  const marker = '{"__rawArguments__":true}';
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    const line = JSON.stringify(message);
    if (!line.includes(marker)) return send(message);
    stdin.write(`${line.replace(marker, argumentsJson)}\n`);
  };
  try {
    const result = (await client.callTool(
      { name, arguments: JSON.parse(marker) as Record<string, unknown> },
      undefined,
      { timeout: timeoutMs },
    )) as CallToolResult;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    return {
      isError: result.isError === true,
      data: (result.structuredContent ?? {}) as Record<string, unknown>,
      text,
    };
  } finally {
    transport.send = send;
  }
}

/** The text of a resource read's first content. */
export function resourceText(result: ReadResourceResult): string {
  const first = result.contents[0];
  if (!first || !('text' in first) || typeof first.text !== 'string') throw new Error('no text content');
  return first.text;
}
