// Precompresses the static files of a build folder (the explorer, GraphiQL's assets): beside
// every text file of at least 1 KiB, `<file>.br` (brotli, quality 11, or 9 for a file over
// 1 MiB) and `<file>.gz` (gzip, level 9), each kept only when smaller than the file. The server
// picks one by the request's accept-encoding (src/static-files.ts) and sends the file itself to
// a client that takes neither.
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export const PRECOMPRESSED_SUFFIXES = ['.br', '.gz'];
const TEXT_EXTENSIONS = new Set(['.html', '.js', '.css', '.svg', '.json', '.ico']);
const MIN_BYTES = 1024;

/** Writes the compressed variants under `dir`; returns every file's size and its variants' sizes. */
export function precompressDir(dir) {
  const written = [];
  for (const path of filesUnder(dir)) {
    if (PRECOMPRESSED_SUFFIXES.some((suffix) => path.endsWith(suffix))) continue;
    const body = readFileSync(path);
    const sizes = { path, bytes: body.length };
    written.push(sizes);
    if (!TEXT_EXTENSIONS.has(extname(path)) || body.length < MIN_BYTES) continue;
    const variants = { br: brotli(body), gz: gzipSync(body, { level: 9 }) };
    for (const [suffix, compressed] of Object.entries(variants)) {
      const target = `${path}.${suffix}`;
      if (compressed.length < body.length) {
        writeFileSync(target, compressed);
        sizes[suffix] = compressed.length;
      } else rmSync(target, { force: true });
    }
  }
  return written;
}

/**
 * Quality 11 up to 1 MiB; above, quality 9 with a 16 MiB window: GraphiQL's 8 MB script then
 * takes about 5 s instead of 40–50 s on a shared 2-core machine, for a file 10% larger
 * (1.48 MB against 1.35 MB; gzip's is 1.99 MB).
 */
function brotli(body) {
  const large = body.length > 1024 * 1024;
  return brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: large ? 9 : constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: large ? 24 : constants.BROTLI_DEFAULT_WINDOW,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
}

function* filesUnder(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}
