/**
 * /explore: the explorer page, static files built into dist/explorer by `npm run build` (Vite).
 * Nothing here reads memory: the page asks for a bearer token and sends it to /graphql like any
 * other client, so the page itself is public and the data behind it is not.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IMMUTABLE, fileInside, sendStaticFile } from './static-files.js';

export const EXPLORE_PATH = '/explore';
/** The build output; the same path from src/ (tsx) and dist/ (the build). */
export const EXPLORER_DIR = fileURLToPath(new URL('../dist/explorer/', import.meta.url));

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
  const relative = path.slice(EXPLORE_PATH.length + 1);
  const file = fileInside(EXPLORER_DIR, relative === '' ? 'index.html' : relative);
  if (!file) return send(res, 404, 'text/plain; charset=utf-8', 'Not found.');
  const page = file.path === `${EXPLORER_DIR}index.html`;
  // Vite names assets by content hash, so they never change; the page itself is always revalidated.
  const cacheControl = file.path.startsWith(`${EXPLORER_DIR}assets${sep}`) ? IMMUTABLE : 'no-cache';
  if (await sendStaticFile(req, res, { ...file, cacheControl, headers: SECURITY_HEADERS })) return;
  if (page) {
    return send(res, 503, 'text/plain; charset=utf-8', 'The explorer is not built: run `npm run build`.');
  }
  send(res, 404, 'text/plain; charset=utf-8', 'Not found.');
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': String(Buffer.byteLength(body)),
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body);
}
