import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** JSON-RPC's range for server-defined errors: the gateway could not be reached or refused. */
const UNREACHABLE = -32000;

/**
 * `memgate mcp --url http://HOST:PORT`: stdio for the client, the running gateway's /mcp
 * behind it. Every message the client writes is POSTed to /mcp as it is, with the bearer
 * token, and what the gateway answers is written back: the tools, their checks and the
 * principal are the gateway's own. This is how a desktop client reaches the embedded database
 * while a gateway holds it (one process per data folder). /mcp is stateless and answers each
 * request with one JSON response, so no session or event stream is kept here.
 */
export async function startStdioProxy(endpoint: URL, token: string | undefined): Promise<void> {
  const local = new StdioServerTransport();
  let protocolVersion: string | undefined;

  const forward = async (message: JSONRPCMessage): Promise<void> => {
    const isRequest = 'method' in message && 'id' in message;
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}),
        },
        body: JSON.stringify(message),
      });
    } catch (error) {
      const reason = networkReason(error);
      return refuse(
        message,
        `memgate mcp: cannot reach the gateway at ${endpoint.href} (${reason}); is it running?`,
      );
    }
    const text = await response.text();
    if (response.status === 202 || !isRequest) return; // a notification: nothing comes back
    let answers: JSONRPCMessage[];
    try {
      const body = JSON.parse(text) as JSONRPCMessage | JSONRPCMessage[];
      answers = Array.isArray(body) ? body : [body];
    } catch {
      return refuse(
        message,
        `memgate mcp: ${endpoint.href} answered HTTP ${response.status}, not MCP: is it memgate's /mcp?`,
      );
    }
    for (const answer of answers) {
      // The gateway refuses some requests before they reach the protocol (401, 403, 400): its
      // JSON-RPC error carries no id then, and is the answer to this request.
      const routed = 'error' in answer && answer.id == null ? { ...answer, id: message.id } : answer;
      if ('result' in routed && typeof routed.result?.protocolVersion === 'string') {
        protocolVersion = routed.result.protocolVersion;
      }
      await local.send(routed as JSONRPCMessage);
    }
  };

  const refuse = async (message: JSONRPCMessage, text: string): Promise<void> => {
    process.stderr.write(`${text}\n`);
    if ('method' in message && 'id' in message) {
      await local.send({ jsonrpc: '2.0', id: message.id, error: { code: UNREACHABLE, message: text } });
    }
  };

  local.onmessage = (message) => {
    forward(message).catch((error: unknown) => process.stderr.write(`memgate mcp: ${String(error)}\n`));
  };
  const close = () => process.exit(0);
  local.onclose = close;
  process.stdin.on('end', close);
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
  await local.start();
}

/** ECONNREFUSED, ENOTFOUND…: what fetch's "fetch failed" hides in its cause. */
function networkReason(error: unknown): string {
  type Cause = { code?: string; errors?: { code?: string }[]; message?: string };
  const cause = (error as { cause?: Cause }).cause;
  return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
}

/** The gateway's /mcp from what a user types: `http://HOST:PORT`, `…/graphql` or `…/mcp`. */
export function mcpEndpoint(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url must be an http(s) URL such as http://127.0.0.1:4000, got "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`--url must be an http(s) URL such as http://127.0.0.1:4000, got "${url}"`);
  }
  parsed.pathname = `${parsed.pathname.replace(/\/(graphql|mcp)?\/?$/, '')}/mcp`;
  return parsed;
}
