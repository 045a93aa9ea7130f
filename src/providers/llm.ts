import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { z } from 'zod';

/**
 * The chat-completions client behind rerank and answer synthesis. Two providers: `echo` (no
 * model configured — callers fall back to what they can do without one) and
 * `openai:<model>` (the `openai` package against OPENAI_BASE_URL, so any compatible server
 * works). Reads never fail because a model failed: every error surfaces as an `LlmError` that
 * callers turn into a fallback.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatOptions {
  temperature: number;
  timeoutMs: number;
  maxTokens?: number;
  /** Ask for a JSON object (`response_format: json_object`); the reply is still validated. */
  json?: boolean;
  /** Ask for structured output against this JSON Schema (`response_format: json_schema`). */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** Another model on the same server (a namespace's own choice). */
  model?: string;
}

/** A reply with what it cost, as the server counted it (0 when it did not say). */
export interface ChatResult {
  content: string;
  tokensIn: number;
  tokensOut: number;
}

export interface Llm {
  /** "echo" or "openai:<model>". */
  readonly name: string;
  /** False for echo: nothing will answer, so callers skip the call entirely. */
  readonly available: boolean;
  chat(messages: ChatMessage[], options: ChatOptions): Promise<string>;
  /** The same call, with the token counts (absent on providers that cannot count). */
  chatWithUsage?(messages: ChatMessage[], options: ChatOptions): Promise<ChatResult>;
}

export type LlmFailure = 'unavailable' | 'timeout' | 'http' | 'connection' | 'malformed' | 'empty';

export class LlmError extends Error {
  /** The HTTP status of an `http` failure, and the wait a 429 or 503 asked for (Retry-After). */
  status?: number;
  retryAfterMs?: number;

  constructor(
    readonly reason: LlmFailure,
    message: string,
    options?: { cause?: unknown; status?: number; retryAfterMs?: number },
  ) {
    super(message, options);
    this.name = 'LlmError';
    this.status = options?.status;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export const ECHO_LLM: Llm = {
  name: 'echo',
  available: false,
  async chat() {
    throw new LlmError('unavailable', 'no language model is configured (MEMGATE_LLM unset or "echo")');
  },
};

export interface LlmSettings {
  /** MEMGATE_LLM: unset or "echo" → echo; "openai:<model>" → chat completions. */
  spec: string | undefined;
  apiKey?: string;
  baseURL?: string;
}

// Local servers (vLLM, llama.cpp, Ollama…) accept any bearer token but the SDK insists on one.
const PLACEHOLDER_API_KEY = 'memgate-no-key';

export function parseLlmSpec(spec: string | undefined): { kind: 'echo' } | { kind: 'openai'; model: string } {
  const value = (spec ?? '').trim();
  if (value === '' || value === 'echo') return { kind: 'echo' };
  if (value.startsWith('openai:') && value.length > 'openai:'.length) {
    return { kind: 'openai', model: value.slice('openai:'.length) };
  }
  throw new Error(`MEMGATE_LLM=${JSON.stringify(spec)}: expected "echo" or "openai:<model>"`);
}

export function createLlm(settings: LlmSettings): Llm {
  const spec = parseLlmSpec(settings.spec);
  if (spec.kind === 'echo') return ECHO_LLM;
  const apiKey = settings.apiKey || (settings.baseURL ? PLACEHOLDER_API_KEY : undefined);
  if (!apiKey) {
    throw new Error(
      `MEMGATE_LLM=openai:${spec.model} needs OPENAI_API_KEY (or OPENAI_BASE_URL of a local server that needs no key)`,
    );
  }
  // Retries are off: callers have a fixed time budget and a fallback, a retry only delays it.
  const client = new OpenAI({ apiKey, baseURL: settings.baseURL, maxRetries: 0 });
  const model = spec.model;
  const call = async (messages: ChatMessage[], options: ChatOptions): Promise<ChatResult> => {
    let response: OpenAI.Chat.Completions.ChatCompletion;
    try {
      response = await client.chat.completions.create(
        {
          model: options.model ?? model,
          messages,
          temperature: options.temperature,
          ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
          ...responseFormat(options),
        },
        { timeout: options.timeoutMs, maxRetries: 0 },
      );
    } catch (error) {
      throw toLlmError(error, options.timeoutMs);
    }
    const reply = response as {
      choices?: { message?: { content?: unknown } }[];
      usage?: { prompt_tokens?: number; completion_tokens?: number };
    };
    const content = reply?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new LlmError('malformed', 'the model returned no message content');
    if (content.trim() === '') throw new LlmError('empty', 'the model returned an empty message');
    return {
      content,
      tokensIn: reply.usage?.prompt_tokens ?? 0,
      tokensOut: reply.usage?.completion_tokens ?? 0,
    };
  };
  return {
    name: `openai:${model}`,
    available: true,
    chat: async (messages, options) => (await call(messages, options)).content,
    chatWithUsage: call,
  };
}

function responseFormat(options: ChatOptions): Record<string, unknown> {
  if (options.jsonSchema) {
    return {
      response_format: {
        type: 'json_schema',
        json_schema: { name: options.jsonSchema.name, schema: options.jsonSchema.schema, strict: true },
      },
    };
  }
  return options.json ? { response_format: { type: 'json_object' } } : {};
}

/**
 * Parses a JSON object out of a model reply (tolerating a Markdown code fence or prose around
 * it) and validates it; anything else is an `LlmError('malformed')`.
 */
export function parseJsonReply<T extends z.ZodType>(reply: string, schema: T): z.output<T> {
  const text = reply.trim();
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  const candidate = fenced ? fenced[1]! : text;
  const start = candidate.indexOf('{');
  const end = candidate.lastIndexOf('}');
  if (start < 0 || end <= start) throw new LlmError('malformed', 'the reply holds no JSON object');
  let value: unknown;
  try {
    value = JSON.parse(candidate.slice(start, end + 1));
  } catch (error) {
    throw new LlmError('malformed', 'the reply is not valid JSON', { cause: error });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new LlmError('malformed', 'the reply does not have the expected shape');
  return parsed.data;
}

function toLlmError(error: unknown, timeoutMs: number): LlmError {
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError('timeout', `the model did not answer within ${timeoutMs} ms`, { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new LlmError('connection', 'could not reach the model server', { cause: error });
  }
  if (error instanceof APIError) {
    return new LlmError('http', `the model server answered HTTP ${error.status ?? '?'}`, {
      cause: error,
      status: error.status,
      retryAfterMs: retryAfterMs(error.headers),
    });
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return new LlmError('timeout', `the model did not answer within ${timeoutMs} ms`, { cause: error });
  }
  return new LlmError('connection', error instanceof Error ? error.message : String(error), { cause: error });
}

/** Retry-After in seconds or as an HTTP date, in milliseconds; undefined when absent or unreadable. */
function retryAfterMs(headers: unknown): number | undefined {
  const get = (name: string): string | null | undefined =>
    headers && typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(name)
      : (headers as Record<string, string> | undefined)?.[name];
  const value = get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * Bounds any provider call by `ms`, even one that never settles; the SDK's own timeout covers
 * the HTTP exchange, this covers everything around it.
 */
export async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LlmError('timeout', `the model did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

// One client per process configuration: the SDK client keeps its connection pool.
const byConfig = new WeakMap<object, Llm>();

/** The LLM for a loaded configuration, created once per configuration object. */
export function llmFor(config: {
  llm: string | undefined;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
}): Llm {
  let llm = byConfig.get(config);
  if (!llm) {
    llm = createLlm({ spec: config.llm, apiKey: config.openaiApiKey, baseURL: config.openaiBaseUrl });
    byConfig.set(config, llm);
  }
  return llm;
}
