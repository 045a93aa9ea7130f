/**
 * A local OpenAI-compatible embeddings endpoint (POST /v1/embeddings) for mem0: texts the
 * benchmark stored get the very vector memgate stored for them, anything else (queries) goes
 * through the same offline embedder memgate embeds queries with. No network, no model download.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Embedder } from '../../src/providers/embedder.js';

export interface EmbeddingServer {
  /** Base URL for an OpenAI client (ends in /v1). */
  url: string;
  requests: number;
  close(): Promise<void>;
}

interface EmbeddingsRequest {
  input: string | string[];
  model?: string;
  /** OpenAI's: float arrays, or base64 of little-endian float32 (the openai client's default). */
  encoding_format?: 'float' | 'base64';
}

const base64Floats = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');

export async function startEmbeddingServer(
  embedder: Embedder,
  known: ReadonlyMap<string, number[]> = new Map(),
): Promise<EmbeddingServer> {
  const state = { requests: 0 };
  const answer = async (request: EmbeddingsRequest) => {
    const texts = Array.isArray(request.input) ? request.input : [request.input];
    const missing = texts.filter((t) => !known.has(t));
    const computed = missing.length ? await embedder.embed(missing) : [];
    const fresh = new Map(missing.map((t, i) => [t, computed[i]!]));
    return {
      object: 'list',
      model: request.model ?? embedder.model,
      data: texts.map((t, index) => ({
        object: 'embedding',
        index,
        embedding:
          request.encoding_format === 'base64'
            ? base64Floats(known.get(t) ?? fresh.get(t)!)
            : (known.get(t) ?? fresh.get(t)!),
      })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests++;
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'only POST /v1/embeddings is served' } }));
        return;
      }
      let request: EmbeddingsRequest;
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as EmbeddingsRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the body is not JSON' } }));
        return;
      }
      answer(request).then(
        (body) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ error: { message: error instanceof Error ? error.message : String(error) } }),
          );
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
