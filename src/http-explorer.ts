/**
 * /explore: the explorer page, static files built into dist/explorer by `npm run build` (Vite).
 * Nothing here reads memory: the page asks for a bearer token and sends it to /graphql like any
 * other client, so the page itself is public and the data behind it is not.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const EXPLORE_PATH = '/explore';
/** The build output; the same path from src/ (tsx) and dist/ (the build). */
export const EXPLORER_DIR = fileURLToPath(new URL('../dist/explorer/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Only this origin: scripts, styles and requests stay local (no CDN, no third party). */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function isExplorePath(path: string): boolean {
  return path === EXPLORE_PATH || path.startsWith(`${EXPLORE_PATH}/`);
}

export async function handleExplore(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed.', { allow: 'GET, HEAD' });
  }
  if (path === EXPLORE_PATH) {
    // Re-encoded by URL, so whatever the request carried is a valid header value.
    const { search } = new URL(req.url ?? '', 'http://localhost');
    res.writeHead(308, { location: `${EXPLORE_PATH}/${search}`, 'content-length': '0' });
    res.end();
    return;
  }
  const relative = decodeSafely(path.slice(EXPLORE_PATH.length + 1)) ?? '\0';
  const file = relative === '' ? 'index.html' : normalize(relative);
  const full = join(EXPLORER_DIR, file);
  if (
    file.includes('\0') ||
    file.startsWith('..') ||
    !full.startsWith(EXPLORER_DIR.replace(/[\\/]$/, '') + sep)
  ) {
    return send(res, 404, 'text/plain; charset=utf-8', 'Not found.');
  }
  const type = CONTENT_TYPES[extname(file)];
  let body: Buffer;
  try {
    if (!type) throw new Error('unknown type');
    body = await readFile(full);
  } catch {
    if (file === 'index.html') {
      return send(res, 503, 'text/plain; charset=utf-8', 'The explorer is not built: run `npm run build`.');
    }
    return send(res, 404, 'text/plain; charset=utf-8', 'Not found.');
  }
  // Vite names assets by content hash, so they never change; the page itself is always revalidated.
  const cache = file.startsWith(`assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache';
  send(res, 200, type, req.method === 'HEAD' ? null : body, { 'cache-control': cache }, body.length);
}

function decodeSafely(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: Buffer | string | null,
  headers: Record<string, string> = {},
  length?: number,
): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': String(length ?? Buffer.byteLength(body ?? '')),
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body ?? undefined);
}
