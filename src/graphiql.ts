/**
 * GraphiQL at GET /graphql (outside production): a page of a few hundred bytes naming the
 * content-hashed script, stylesheet and icon the build wrote to dist/graphiql
 * (scripts/build-graphiql.mjs), served precompressed under /graphiql/assets/ and cached by
 * browsers for good. The page is rendered per request and always revalidated. Without the build
 * (`tsx` on a checkout never built), render-graphiql's own page is served: every asset inline.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { IMMUTABLE, fileInside, sendStaticFile } from './static-files.js';

/** The build output; the same path from src/ (tsx) and dist/ (the build). */
export const GRAPHIQL_DIR = fileURLToPath(new URL('../dist/graphiql/', import.meta.url));
export const GRAPHIQL_ASSETS_PATH = '/graphiql/assets/';

/** What scripts/build-graphiql.mjs wrote: the assets' file names under assets/. */
interface Manifest {
  optionsElementId: string;
  script: string;
  style: string;
  icon: string;
}

export const GRAPHIQL_OPTIONS: GraphiQLOptions = {
  title: 'memgate',
  defaultQuery: `# Welcome to memgate. Write an entity, then read it back.
mutation Write {
  upsertEntities(namespace: "demo", entities: [{ key: "alice", kind: "person", title: "Alice" }]) {
    accepted
    results { index status key }
  }
}

query Read {
  entity(namespace: "demo", key: "alice") { id key kind title }
}
`,
};

/** yoga's `renderGraphiQL`: the page naming the built assets, with the options as JSON data. */
export async function renderGraphiQLPage(options: GraphiQLOptions): Promise<string> {
  const manifest = await readManifest();
  if (!manifest) {
    // Loaded on the first page only (it is ~0.2 s of module loading).
    return (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options);
  }
  const asset = (name: string) => escapeHtml(`${GRAPHIQL_ASSETS_PATH}${encodeURIComponent(name)}`);
  // In a script element only `</script` (and `<!--`) could end it early: `<` is escaped in JSON.
  const data = JSON.stringify(options).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${asset(manifest.icon)}" />
    <link rel="stylesheet" href="${asset(manifest.style)}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script id="${escapeHtml(manifest.optionsElementId)}" type="application/json">${data}</script>
    <script src="${asset(manifest.script)}"></script>
  </body>
</html>
`;
}

/** The page names the assets of the build it was rendered from: never kept by a cache. */
export function useGraphiQLPageHeaders(): Plugin {
  return {
    onResponse({ request, response }) {
      if (request.method !== 'GET' || response.headers.has('cache-control')) return;
      if (response.headers.get('content-type')?.startsWith('text/html')) {
        response.headers.set('cache-control', 'no-cache');
      }
    },
  };
}

export function isGraphiQLAssetPath(path: string): boolean {
  return path.startsWith(GRAPHIQL_ASSETS_PATH);
}

/** GET/HEAD /graphiql/assets/<name>: the built file, precompressed, cached for good. */
export async function handleGraphiQLAsset(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const headers = { 'x-content-type-options': 'nosniff' };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, HEAD', ...headers });
    res.end('Method not allowed.');
    return;
  }
  const file = fileInside(join(GRAPHIQL_DIR, 'assets/'), path.slice(GRAPHIQL_ASSETS_PATH.length));
  if (file && (await sendStaticFile(req, res, { ...file, cacheControl: IMMUTABLE, headers }))) return;
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end('Not found.');
}

async function readManifest(): Promise<Manifest | null> {
  try {
    return JSON.parse(await readFile(join(GRAPHIQL_DIR, 'manifest.json'), 'utf8')) as Manifest;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
