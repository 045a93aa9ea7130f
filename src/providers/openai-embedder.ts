import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { z } from 'zod';
import { type Embedder, l2Normalise } from './embedder.js';
import { hashingVector } from './hashing-embedder.js';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
// Local servers (vLLM, llama.cpp, Ollama…) accept any bearer token but the SDK insists on one.
const PLACEHOLDER_API_KEY = 'memgate-no-key';

/** Native sizes; other models must state theirs in the spec ("openai:<model>:<dimensions>"). */
export const KNOWN_OPENAI_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

export interface OpenAIEmbedderOptions {
  readonly model: string;
  /** Requested output size; defaults to the model's native size when known. */
  readonly dimensions?: number;
  readonly apiKey?: string;
  readonly baseURL?: string;
  readonly log?: (msg: string) => void;
  // Tuning hooks; the defaults suit production and tests shrink them.
  readonly timeoutMs?: number;
  readonly maxAttempts?: number;
  readonly retryBaseMs?: number;
  readonly batchSize?: number;
}

export const OPENAI_DEFAULTS = {
  timeoutMs: 30_000,
  maxAttempts: 3,
  retryBaseMs: 500,
  batchSize: 256,
} as const;

// OpenAI caps a request at 300k tokens; ~4 characters a token keeps a batch well under it.
const MAX_BATCH_CHARACTERS = 400_000;

const responseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
});

export function createOpenAIEmbedder(options: OpenAIEmbedderOptions): Embedder {
  const { model } = options;
  const nativeDimensions = KNOWN_OPENAI_DIMENSIONS[model];
  const dimensions = options.dimensions ?? nativeDimensions;
  if (dimensions === undefined) {
    throw new Error(
      `openai embedder: the dimensions of model "${model}" are unknown; state them as ` +
        `MEMGATE_EMBEDDER=openai:${model}:<dimensions>`,
    );
  }
  if (!Number.isInteger(dimensions) || dimensions < 1) {
    throw new Error(`openai embedder: dimensions must be a positive integer, got ${dimensions}`);
  }
  const apiKey = options.apiKey || (options.baseURL ? PLACEHOLDER_API_KEY : undefined);
  if (!apiKey) {
    throw new Error(
      `openai embedder: OPENAI_API_KEY is required for MEMGATE_EMBEDDER=openai:${model} ` +
        '(or set OPENAI_BASE_URL to a local OpenAI-compatible server that needs no key)',
    );
  }
  const baseURL = options.baseURL || OPENAI_BASE_URL;
  const timeoutMs = options.timeoutMs ?? OPENAI_DEFAULTS.timeoutMs;
  const maxAttempts = Math.max(1, options.maxAttempts ?? OPENAI_DEFAULTS.maxAttempts);
  const retryBaseMs = options.retryBaseMs ?? OPENAI_DEFAULTS.retryBaseMs;
  const batchSize = Math.max(1, options.batchSize ?? OPENAI_DEFAULTS.batchSize);
  const log = options.log ?? (() => {});

  // The SDK's own retries are off so attempts, backoff and the final message are ours to state.
  const client = new OpenAI({ apiKey, baseURL, timeout: timeoutMs, maxRetries: 0 });
  // ada-002 rejects the parameter, so only send it when it changes something.
  const dimensionsParam = dimensions === nativeDimensions ? {} : { dimensions };
  const describe = `model ${model} at ${baseURL}`;

  async function embedBatch(batch: string[]): Promise<number[][]> {
    for (let attempt = 1; ; attempt++) {
      let response: unknown;
      try {
        response = await client.embeddings.create({
          model,
          // The API rejects empty strings; a space embeds as "nothing" just the same.
          input: batch.map((text) => (text.length > 0 ? text : ' ')),
          // Many compatible servers do not implement base64, the SDK's default.
          encoding_format: 'float',
          ...dimensionsParam,
        });
      } catch (error) {
        const reason = describeError(error, timeoutMs);
        if (!isRetryable(error)) throw new Error(`openai embedder: ${describe}: ${reason}`, { cause: error });
        if (attempt >= maxAttempts) {
          throw new Error(`openai embedder: ${describe}: ${reason} (gave up after ${attempt} attempts)`, {
            cause: error,
          });
        }
        const delay = retryBaseMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.25);
        log(
          `openai embedder: ${reason}; retrying in ${Math.round(delay)} ms (attempt ${attempt + 1}/${maxAttempts})`,
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
        continue;
      }
      return toVectors(response, batch);
    }
  }

  function toVectors(response: unknown, batch: string[]): number[][] {
    const parsed = responseSchema.safeParse(response);
    if (!parsed.success) throw new Error(`openai embedder: ${describe}: malformed embeddings response`);
    const vectors: (number[] | undefined)[] = new Array(batch.length);
    for (const item of parsed.data.data) {
      if (item.embedding.length !== dimensions) {
        throw new Error(
          `openai embedder: ${describe} returned ${item.embedding.length} dimensions, expected ${dimensions}`,
        );
      }
      // Servers are not obliged to normalise (OpenAI does; many local models do not).
      vectors[item.index] = l2Normalise(item.embedding) ?? hashingVector(batch[item.index] ?? '', dimensions);
    }
    if (parsed.data.data.length !== batch.length || vectors.some((v) => v === undefined)) {
      throw new Error(
        `openai embedder: ${describe} returned ${parsed.data.data.length} embeddings for ${batch.length} inputs`,
      );
    }
    return vectors as number[][];
  }

  return {
    model: `openai:${model}`,
    dimensions,
    async embed(texts) {
      const results: number[][] = [];
      for (const batch of batches(texts, batchSize)) results.push(...(await embedBatch(batch)));
      return results;
    },
  };
}

/** Consecutive slices of at most `size` texts and about MAX_BATCH_CHARACTERS characters. */
function* batches(texts: string[], size: number): Generator<string[]> {
  let batch: string[] = [];
  let characters = 0;
  for (const text of texts) {
    if (batch.length > 0 && (batch.length >= size || characters + text.length > MAX_BATCH_CHARACTERS)) {
      yield batch;
      batch = [];
      characters = 0;
    }
    batch.push(text);
    characters += text.length;
  }
  if (batch.length > 0) yield batch;
}

/** Rate limits, server faults and network trouble (timeouts included) are worth another try. */
function isRetryable(error: unknown): boolean {
  if (error instanceof APIConnectionError) return true;
  if (error instanceof APIError && error.status !== undefined)
    return error.status === 429 || error.status >= 500;
  return false;
}

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof APIConnectionTimeoutError) return `request timed out after ${timeoutMs} ms`;
  if (error instanceof APIConnectionError)
    return `connection failed: ${error.cause instanceof Error ? error.cause.message : error.message}`;
  if (error instanceof APIError) return `HTTP ${error.status ?? '?'}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
