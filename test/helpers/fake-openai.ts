import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible chat-completions server for tests: never the internet. Each test
 * says how the next requests are answered — a message, an HTTP error, a body that is not
 * JSON, or a delay — and can read back every request it received.
 */

export type FakeReply =
  /** A normal completion whose message content is `content` (usage: token counts to report). */
  | { content: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  /** An HTTP error status with an OpenAI-style error body (and headers such as Retry-After). */
  | { status: number; message?: string; headers?: Record<string, string> }
  /** A 200 whose body is this raw text (e.g. broken JSON). */
  | { raw: string }
  /** Waits, then answers with `reply` (the client may have given up by then). */
  | { delayMs: number; reply: FakeReply };

export interface ChatRequest {
  model: string;
  temperature?: number;
  messages: { role: string; content: string }[];
  response_format?: unknown;
  [key: string]: unknown;
}

export type FakeHandler = (request: ChatRequest) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** Base URL to use as OPENAI_BASE_URL (ends in /v1). */
  url: string;
  requests: ChatRequest[];
  /** Replaces how requests are answered from now on. */
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

export async function startFakeOpenAI(handler: FakeHandler = () => ({ content: 'ok' })): Promise<FakeOpenAI> {
  let current = handler;
  const requests: ChatRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = async (res: ServerResponse, reply: FakeReply, model: string): Promise<void> => {
    if ('delayMs' in reply) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          timers.delete(t);
          resolve();
        }, reply.delayMs);
        timers.add(t);
      });
      if (res.destroyed || res.writableEnded) return;
      return send(res, reply.reply, model);
    }
    if ('status' in reply) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify({ error: { message: reply.message ?? 'fake failure', type: 'server_error' } }));
      return;
    }
    if ('raw' in reply) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(reply.raw);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-fake-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content } },
        ],
        usage: {
          prompt_tokens: reply.usage?.prompt_tokens ?? 1,
          completion_tokens: reply.usage?.completion_tokens ?? 1,
          total_tokens: (reply.usage?.prompt_tokens ?? 1) + (reply.usage?.completion_tokens ?? 1),
        },
      }),
    );
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'not found' } }));
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
        requests.push(body);
        try {
          await send(res, await current(body), body.model);
        } catch {
          if (!res.headersSent) res.writeHead(500);
          res.end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    handle(next) {
      current = next;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The passages of a rerank prompt (whole, several lines each), in the order the model sees them. */
export function rerankPassages(request: ChatRequest): string[] {
  const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const at = user.indexOf('\nPassages:\n');
  if (at < 0) return [];
  return user
    .slice(at + '\nPassages:\n'.length)
    .split(/\n\n(?=\[\d+\] )/)
    .map((p) => p.replace(/^\[\d+\] /, ''));
}

/** The texts of an extraction prompt with their numbers (the `message` a fact names), in order. */
export function extractionMessages(request: ChatRequest): { n: number; text: string }[] {
  const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
  return [...user.matchAll(/<message n="(\d+)"[^>]*>\n([\s\S]*?)\n<\/message>/g)].map((m) => ({
    n: Number(m[1]),
    text: m[2]!,
  }));
}
