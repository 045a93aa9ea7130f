/**
 * Static files of the build (the explorer in dist/explorer, GraphiQL's assets in dist/graphiql):
 * a path resolved strictly inside its folder, and the file sent in the coding the request
 * accepts — `<file>.br` or `<file>.gz`, written beside it by the build (scripts/precompress.mjs),
 * or the file itself. Nothing is compressed per request.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { type Coding, acceptedCodings } from './http-encoding.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const SUFFIX: Record<Coding, string> = { br: '.br', gzip: '.gz', identity: '' };

/** Content-hashed names never change: browsers and proxies may keep them for a year. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface StaticFile {
  /** The file itself (its variants are this path plus .br and .gz). */
  path: string;
  type: string;
  cacheControl: string;
  /** More response headers (a security policy, say). */
  headers?: Record<string, string>;
}

/**
 * The file a URL path names under `dir` (`relative` as the URL carries it, percent-encoded),
 * with its content type; null for anything outside the folder or of a type not served.
 */
export function fileInside(dir: string, relative: string): { path: string; type: string } | null {
  const decoded = decodeSafely(relative);
  if (decoded === null || decoded.includes('\0')) return null;
  const file = normalize(decoded);
  const path = join(dir, file);
  if (file.startsWith('..') || !path.startsWith(dir.replace(/[\\/]$/, '') + sep)) return null;
  const type = CONTENT_TYPES[extname(file)];
  return type ? { path, type } : null;
}

/**
 * Sends the best variant of `file` the request accepts, with `Vary: Accept-Encoding`, its own
 * Content-Encoding and Content-Length, and no body for HEAD. Resolves false, having sent
 * nothing, when the file does not exist.
 */
export async function sendStaticFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: StaticFile,
): Promise<boolean> {
  for (const coding of acceptedCodings(req.headers['accept-encoding'])) {
    const body = await readIfPresent(file.path + SUFFIX[coding]);
    if (body === null) {
      if (coding === 'identity') return false;
      continue;
    }
    res.writeHead(200, {
      'content-type': file.type,
      'content-length': String(body.length),
      ...(coding === 'identity' ? {} : { 'content-encoding': coding }),
      vary: 'Accept-Encoding',
      'cache-control': file.cacheControl,
      ...file.headers,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }
  return false;
}

async function readIfPresent(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
    throw error;
  }
}

function decodeSafely(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
