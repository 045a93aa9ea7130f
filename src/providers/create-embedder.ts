import type { Embedder } from './embedder.js';
import { createHashingEmbedder, DEFAULT_HASHING_DIMENSIONS } from './hashing-embedder.js';
import { createOfflineEmbedder } from './offline-embedder.js';
import { createOpenAIEmbedder } from './openai-embedder.js';

export interface CreateEmbedderOptions {
  dataDir: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  log?: (msg: string) => void;
}

export type EmbedderSpec =
  | { kind: 'offline' }
  | { kind: 'openai'; model: string; dimensions?: number }
  | { kind: 'hashing'; dimensions: number };

export const ACCEPTED_EMBEDDER_SPECS =
  '"offline" (default), "openai:<model>[:<dimensions>]" (e.g. openai:text-embedding-3-small:512), ' +
  '"hashing[:<dimensions>]" (tests only)';

/**
 * Parses MEMGATE_EMBEDDER. Exported so configuration can reject a bad value at start-up,
 * before anything is opened. Model names may contain colons (Ollama tags such as
 * "nomic-embed-text:v1.5"), so only an all-digit last segment is read as dimensions.
 */
export function parseEmbedderSpec(spec: string): EmbedderSpec {
  const value = spec.trim();
  // An empty variable means "not set", so it gets the default.
  if (value === '' || value === 'offline') return { kind: 'offline' };

  const hashing = /^hashing(?::(\d+))?$/.exec(value);
  if (hashing) {
    const dimensions = hashing[1] === undefined ? DEFAULT_HASHING_DIMENSIONS : Number(hashing[1]);
    if (dimensions < 2) throw specError(spec, 'hashing dimensions must be at least 2');
    return { kind: 'hashing', dimensions };
  }

  if (value.startsWith('openai:')) {
    const rest = value.slice('openai:'.length);
    const withDimensions = /^(.+):(\d+)$/.exec(rest);
    const model = withDimensions ? withDimensions[1]! : rest;
    if (model === '' || model.startsWith(':') || model.endsWith(':'))
      throw specError(spec, 'the model name is missing');
    if (!withDimensions) return { kind: 'openai', model };
    const dimensions = Number(withDimensions[2]);
    if (dimensions < 1) throw specError(spec, 'dimensions must be a positive integer');
    return { kind: 'openai', model, dimensions };
  }

  throw specError(spec, 'unknown embedder');
}

export async function createEmbedder(spec: string, options: CreateEmbedderOptions): Promise<Embedder> {
  const parsed = parseEmbedderSpec(spec);
  switch (parsed.kind) {
    case 'offline':
      return createOfflineEmbedder({ dataDir: options.dataDir, log: options.log });
    case 'hashing':
      return createHashingEmbedder(parsed.dimensions);
    case 'openai':
      return createOpenAIEmbedder({
        model: parsed.model,
        dimensions: parsed.dimensions,
        apiKey: options.openaiApiKey,
        baseURL: options.openaiBaseUrl,
        log: options.log,
      });
  }
}

function specError(spec: string, problem: string): Error {
  return new Error(
    `MEMGATE_EMBEDDER=${JSON.stringify(spec)}: ${problem}; accepted forms: ${ACCEPTED_EMBEDDER_SPECS}`,
  );
}
