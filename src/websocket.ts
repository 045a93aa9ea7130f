import type { IncomingMessage, Server } from 'node:http';
import { type ExecutionArgs, type ExecutionResult, parse } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { Authenticate } from './auth/authenticate.js';
import type { Logger } from './logger.js';
import type { Gateway } from './server.js';

export interface WebSocketOptions {
  gateway: Gateway;
  authenticate: Authenticate;
  logger: Logger;
  path?: string;
  /** The largest message accepted (ws's default is 100 MiB): the gateway's body limit. */
  maxPayloadBytes?: number;
}

/** Any operation parses to this; the real one travels in rootValue and runs through yoga. */
const RELAY_DOCUMENT = parse('subscription Relay { __typename }');

interface RelayRoot {
  authorization: string | null;
  body: string;
}

/**
 * GraphQL over WebSocket (graphql-ws) on /graphql. Each operation is relayed to the gateway as
 * a GraphQL-over-SSE request carrying the connection's credentials, so WebSocket clients pass
 * exactly the /graphql pipeline: authentication, limits, persisted operations, error masking,
 * PII masking and audit. The token comes from the upgrade request's Authorization header or,
 * since browsers cannot set one, from `connectionParams.authorization`.
 */
export function attachWebSockets(server: Server, options: WebSocketOptions): WebSocketServer {
  const path = options.path ?? '/graphql';
  // A message is one operation: no larger than an HTTP body may be (yoga does not check it again).
  const wss = new WebSocketServer({ server, path, maxPayload: options.maxPayloadBytes });
  useServer<Record<string, unknown> | undefined, { authorization: string | null }>(
    {
      onConnect: async (ctx) => {
        const authorization = authorizationOf(ctx.extra.request, ctx.connectionParams);
        try {
          await options.authenticate(
            new Request('http://gateway/graphql', { headers: headersOf(authorization) }),
          );
        } catch {
          return false;
        }
        ctx.extra.authorization = authorization;
        return true;
      },
      onSubscribe: (ctx, _id, payload) => {
        const root: RelayRoot = {
          authorization: ctx.extra.authorization ?? null,
          body: JSON.stringify({
            query: payload.query,
            variables: payload.variables ?? undefined,
            operationName: payload.operationName ?? undefined,
            extensions: payload.extensions ?? undefined,
          }),
        };
        return { schema: options.gateway.getEnveloped().schema, document: RELAY_DOCUMENT, rootValue: root };
      },
      subscribe: (args: ExecutionArgs) => relay(options.gateway, args.rootValue as RelayRoot),
      execute: (args: ExecutionArgs) => relay(options.gateway, args.rootValue as RelayRoot),
    },
    wss,
  );
  wss.on('error', (error) => options.logger.warn('websocket server error', { error: String(error) }));
  return wss;
}

function authorizationOf(
  request: IncomingMessage,
  params: Record<string, unknown> | undefined,
): string | null {
  const fromParams = params?.authorization;
  if (typeof fromParams === 'string') return fromParams;
  return request.headers.authorization ?? null;
}

function headersOf(authorization: string | null): Record<string, string> {
  return authorization ? { authorization } : {};
}

/**
 * Runs one operation through yoga over SSE and yields its results until the stream ends.
 * Completing the operation (or closing the socket) aborts the relayed request at once, which
 * ends the subscription inside the gateway: the generator alone would see return() only after
 * one more chunk, and cancelling the body waits for the stream's pending read, so either way
 * the subscription stayed open until the next change, or for ever.
 */
function relay(gateway: Gateway, root: RelayRoot): AsyncIterableIterator<ExecutionResult> {
  const abort = new AbortController();
  const results = relayResults(gateway, root, abort.signal);
  const stream: AsyncIterableIterator<ExecutionResult> = {
    next: () => results.next(),
    async return() {
      abort.abort();
      return results.return(undefined);
    },
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}

async function* relayResults(
  gateway: Gateway,
  root: RelayRoot,
  signal: AbortSignal,
): AsyncGenerator<ExecutionResult> {
  const response = await gateway.fetch('http://gateway/graphql', {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...headersOf(root.authorization),
    },
    body: root.body,
  });
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream') || !response.body) {
    yield relayed(await response.json());
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  // The aborted request ends the stream; the pending read then sees its end.
  const stop = () => void reader.cancel().catch(() => undefined);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  let buffer = '';
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event?.type === 'complete') return;
        if (event?.type === 'next' && event.data) yield relayed(JSON.parse(event.data));
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
    void reader.cancel().catch(() => undefined);
  }
}

/** Errors arrive already formatted (codes, masking); graphql-ws serialises them with toJSON. */
function relayed(body: { errors?: Record<string, unknown>[] } & Record<string, unknown>): ExecutionResult {
  if (!body.errors) return body as ExecutionResult;
  const errors = body.errors.map((formatted) => ({ ...formatted, toJSON: () => formatted }));
  return { ...body, errors } as unknown as ExecutionResult;
}

function parseEvent(block: string): { type: string; data: string } | null {
  let type = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  return data.length || type === 'complete' ? { type, data: data.join('\n') } : null;
}

/**
 * Ends the WebSocket connections of a server that is stopping (close code 1001, going away),
 * after `graceMs` so that the UNAVAILABLE ending of each subscription goes out first; a peer that
 * does not answer the close within a second is cut. An open socket would otherwise hold
 * `server.close()` until the process is killed.
 */
export function closeWebSockets(wss: WebSocketServer, graceMs = 200): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(() => {
      wss.close(() => resolve());
      for (const client of wss.clients) {
        client.close(1001, 'The server is shutting down.');
        setTimeout(() => client.terminate(), 1000).unref();
      }
    }, graceMs).unref();
  });
}
