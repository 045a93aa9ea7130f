import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Authenticate } from '../auth/authenticate.js';
import type { Logger } from '../logger.js';
import type { Gateway } from '../server.js';
import { graphqlRunner } from './graphql-runner.js';
import { createMcpServer } from './server.js';

export type McpHttpHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer | null) => void;

/**
 * Streamable HTTP at /mcp, stateless: each POST carries its own credentials and gets its own
 * server, so a token is checked on every message exactly as on /graphql (and revoking it
 * applies at once). Answers are single JSON responses; there is no server-initiated stream.
 */
export function createMcpHttpHandler(options: {
  gateway: Gateway;
  authenticate: Authenticate;
  logger: Logger;
}): McpHttpHandler {
  const { gateway, authenticate, logger } = options;
  return (req, res, body) => {
    void handle(req, res, body).catch((error: unknown) => {
      logger.error('mcp request failed', { error: String(error) });
      sendRpcError(res, 500, -32603, 'Unexpected error.');
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer | null): Promise<void> {
    const authorization = req.headers.authorization ?? null;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const request = new Request('http://memgate.local/mcp', { method: req.method ?? 'GET', headers });
    try {
      await authenticate(request);
    } catch (error) {
      const coded = (error as { extensions?: { code?: unknown } }).extensions?.code === 'UNAUTHENTICATED';
      if (!coded) throw error;
      res.setHeader('www-authenticate', 'Bearer realm="memgate"');
      return sendRpcError(res, 401, -32001, `UNAUTHENTICATED: ${(error as Error).message}`);
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendRpcError(res, 405, -32000, 'Method not allowed: this MCP endpoint is stateless, POST only.');
    }
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(body?.toString('utf8') ?? '');
    } catch {
      return sendRpcError(res, 400, -32700, 'Parse error: the body is not JSON.');
    }
    const server = createMcpServer(graphqlRunner(gateway, authorization));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(request, { parsedBody });
      const payload = Buffer.from(await response.arrayBuffer());
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(payload);
    } finally {
      await server.close();
    }
  }
}

function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
