/**
 * The one thing the benchmark stands in for: an OpenAI-compatible chat-completions server on
 * loopback that answers the extraction worker at once. It reads the numbered messages of the
 * prompt and answers, in the JSON shape the worker asks for, a `works_on` fact for every
 * "<Name> works on <Project>" it finds, so the worker writes facts as it would with a model.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModelStandIn {
  /** Base URL to configure as OPENAI_BASE_URL (ends in /v1). */
  url: string;
  /** Chat completions answered so far. */
  calls: number;
  close(): Promise<void>;
}

const MESSAGE = /<message n="(\d+)"[^>]*>\n([\s\S]*?)\n<\/message>/g;
const WORKS_ON = /(\p{Lu}\p{Ll}{1,30}) works on (\p{Lu}[\p{L}\d]{1,40})/gu;

/** The reply to one extraction prompt: what a careful model would read from its messages. */
export function standInReply(prompt: string): { facts: unknown[]; attributes: unknown[] } {
  const facts: unknown[] = [];
  for (const m of prompt.matchAll(MESSAGE)) {
    for (const f of m[2]!.matchAll(WORKS_ON)) {
      facts.push({
        message: Number(m[1]),
        subject: f[1],
        subjectKind: 'person',
        predicate: 'works_on',
        object: f[2],
        objectKind: 'project',
        confidence: 0.7,
      });
    }
  }
  return { facts, attributes: [] };
}

export async function startModelStandIn(): Promise<ModelStandIn> {
  const state = { calls: 0 };
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        answer(res, 404, { error: { message: 'not found' } });
        return;
      }
      let body: { model?: string; messages?: { role: string; content: string }[] };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        answer(res, 400, { error: { message: 'the body is not JSON' } });
        return;
      }
      state.calls += 1;
      const prompt = (body.messages ?? []).map((m) => m.content).join('\n');
      const content = JSON.stringify(standInReply(prompt));
      const tokensIn = Math.ceil(prompt.length / 4);
      const tokensOut = Math.ceil(content.length / 4);
      answer(res, 200, {
        id: `chatcmpl-bench-${state.calls}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? 'bench',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
        usage: { prompt_tokens: tokensIn, completion_tokens: tokensOut, total_tokens: tokensIn + tokensOut },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get calls() {
      return state.calls;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
