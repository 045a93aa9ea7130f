import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Authenticate } from '../auth/authenticate.js';
import { isLoopbackHost } from '../auth/local-mode.js';
import type { Logger } from '../logger.js';
import type { Gateway } from '../server.js';
import { graphqlRunner } from './graphql-runner.js';
import { createMcpServer } from './server.js';
import { DEFAULT_LIMITS, jsonDepthExceeds } from '../security/limits.js';

export type McpHttpHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer | null) => void;

/**
 * Streamable HTTP at /mcp, stateless: each POST carries its own credentials and gets its own
 * server, so a token is checked on every message exactly as on /graphql (and revoking it
 * applies at once). Answers are single JSON responses; there is no server-initiated stream.
 *
 * In local mode (`loopbackOnly`: no tokens, full access) a web page must not reach the tools
 * through the user's browser, so the Host and any Origin must be loopback names: that stops
 * DNS rebinding, which the MCP specification asks HTTP servers to guard against.
 */
export function createMcpHttpHandler(options: {
  gateway: Gateway;
  authenticate: Authenticate;
  logger: Logger;
  loopbackOnly: boolean;
}): McpHttpHandler {
  const { gateway, authenticate, logger, loopbackOnly } = options;
  return (req, res, body) => {
    void handle(req, res, body).catch((error: unknown) => {
      logger.error('mcp request failed', { error: String(error) });
      sendRpcError(res, 500, -32603, 'Unexpected error.');
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer | null): Promise<void> {
    if (loopbackOnly && !fromLoopback(req)) {
      return sendRpcError(
        res,
        403,
        -32000,
        'FORBIDDEN: in local mode /mcp answers loopback hosts and origins only.',
      );
    }
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
    // The SDK validates messages recursively: a deep enough one would overflow the stack.
    if (jsonDepthExceeds(parsedBody, DEFAULT_LIMITS.maxInputDepth)) {
      return sendRpcError(
        res,
        400,
        -32602,
        `BAD_USER_INPUT: the request is nested more than ${DEFAULT_LIMITS.maxInputDepth} levels deep.`,
      );
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

function fromLoopback(req: IncomingMessage): boolean {
  const hostname = (value: string): string | null => {
    try {
      return new URL(value).hostname;
    } catch {
      return null;
    }
  };
  const host = req.headers.host ? hostname(`http://${req.headers.host}`) : null;
  if (!host || !isLoopbackHost(host)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const originHost = hostname(origin);
  return originHost !== null && isLoopbackHost(originHost);
}

function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
