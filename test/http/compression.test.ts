import { readFileSync, readdirSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHIQL_DIR } from '../../src/graphiql.js';
import { EXPLORER_DIR } from '../../src/http-explorer.js';
import { type Browser, launchChromium } from '../helpers/browser.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { LIVE_SUBSCRIPTION, sleep } from '../helpers/live.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * What travels: the explorer's and GraphiQL's files in the coding the request accepts (brotli
 * or gzip written by the build, else the file itself), GraphQL results from 1 KiB compressed per
 * response, small ones and SSE streams untouched. Every request here goes over node:http, which,
 * unlike fetch, shows the bytes as sent.
 */

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it travelled, still encoded. */
  body: Buffer;
}

let gw: TestGateway;
let origin: string;

beforeAll(async () => {
  // No SQL trace: its timings would make two answers to one query differ.
  gw = await startTestGateway({ MEMGATE_TRACE_SQL: '0' });
  origin = new URL(gw.url).origin;
});
afterAll(async () => gw?.close());

function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}${path}`,
      { method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function decoded(res: Raw): Buffer {
  const coding = res.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(res.body);
  if (coding === 'gzip') return gunzipSync(res.body);
  expect(coding).toBeUndefined();
  return res.body;
}

function postGraphQL(query: string, acceptEncoding?: string): Promise<Raw> {
  return raw('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
    },
    body: JSON.stringify({ query }),
  });
}

/** accept-encoding as sent → the coding expected back (null: the bytes themselves). */
const NEGOTIATIONS: [string | undefined, 'br' | 'gzip' | null][] = [
  ['gzip, deflate, br', 'br'],
  ['br', 'br'],
  ['gzip', 'gzip'],
  ['br;q=0.5, gzip', 'gzip'],
  ['br;q=0, gzip;q=0.1', 'gzip'],
  ['*', 'br'],
  ['*;q=0, gzip', 'gzip'],
  ['deflate', null],
  ['identity', null],
  ['br;q=0, gzip;q=0', null],
  [undefined, null],
];

function explorerScript(): string {
  const script = readdirSync(join(EXPLORER_DIR, 'assets')).find((f) => f.endsWith('.js'));
  expect(script, 'dist/explorer is built (npm run build)').toBeDefined();
  return script!;
}

describe('static files', () => {
  it("negotiate the explorer's script: each coding, q-values, the file itself when none is accepted", async () => {
    const script = explorerScript();
    const identity = readFileSync(join(EXPLORER_DIR, 'assets', script));
    for (const [acceptEncoding, expected] of NEGOTIATIONS) {
      const res = await raw(`/explore/assets/${script}`, {
        headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
      });
      expect(res.status, acceptEncoding).toBe(200);
      expect(res.headers['content-encoding'] ?? null, acceptEncoding).toBe(expected);
      expect(Number(res.headers['content-length']), acceptEncoding).toBe(res.body.length);
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(decoded(res).equals(identity), acceptEncoding).toBe(true);
      if (expected) expect(res.body.length).toBeLessThan(identity.length / 2);
    }
  });

  it('answer HEAD with the length of the variant, and keep the entry page revalidated', async () => {
    const script = explorerScript();
    const head = await raw(`/explore/assets/${script}`, {
      method: 'HEAD',
      headers: { 'accept-encoding': 'br' },
    });
    expect(head.headers['content-encoding']).toBe('br');
    expect(Number(head.headers['content-length'])).toBe(
      readFileSync(join(EXPLORER_DIR, 'assets', `${script}.br`)).length,
    );
    expect(head.body.length).toBe(0);

    const page = await raw('/explore/', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers.vary).toBe('Accept-Encoding');
    expect(decoded(page).toString()).toContain(`/explore/assets/${script}`);
    // The variants themselves are no URL of their own.
    expect((await raw(`/explore/assets/${script}.br`)).status).toBe(404);
  });

  it('serve GraphiQL as a small page naming hashed assets, each precompressed and cached for good', async () => {
    const page = await raw('/graphql', { headers: { accept: 'text/html', 'accept-encoding': 'gzip, br' } });
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers.vary).toContain('Accept-Encoding');
    const html = decoded(page).toString();
    expect(html.length).toBeLessThan(4096);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(3);
    let identityBytes = 0;
    for (const asset of assets) {
      expect(asset).toMatch(/^\/graphiql\/assets\/[a-z]+-[0-9a-f]{12}\.(js|css|ico)$/);
      const onDisk = readFileSync(join(GRAPHIQL_DIR, 'assets', asset.split('/').pop()!));
      identityBytes += onDisk.length;
      for (const [acceptEncoding, expected] of NEGOTIATIONS.slice(0, 4)) {
        const res = await raw(asset, { headers: { 'accept-encoding': acceptEncoding! } });
        expect(res.headers['content-encoding'], `${asset} ${acceptEncoding}`).toBe(expected);
        expect(Number(res.headers['content-length'])).toBe(res.body.length);
        expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(res.headers.vary).toBe('Accept-Encoding');
        expect(decoded(res).equals(onDisk)).toBe(true);
      }
      const identity = await raw(asset, { headers: { 'accept-encoding': 'identity' } });
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(identity.body.equals(onDisk)).toBe(true);
    }
    // The same GraphiQL as render-graphiql's one inline page (about 9 MB), now in files.
    expect(identityBytes).toBeGreaterThan(8_000_000);
  });

  it("answer nothing outside GraphiQL's assets, and only GET and HEAD", async () => {
    for (const path of [
      '/graphiql/assets/../manifest.json',
      '/graphiql/assets/%2e%2e/manifest.json',
      '/graphiql/assets/..%2fmanifest.json',
      '/graphiql/assets/nope.js',
      '/graphiql/assets/%00',
    ]) {
      const res = await raw(path);
      expect(res.status, path).toBe(404);
      expect(res.body.toString()).not.toContain('optionsElementId');
    }
    expect((await raw('/graphiql/assets/x.js', { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('serve no GraphiQL asset in production', async () => {
    const { path } = writeTokensFile([{ id: 'agent', read: ['*'] }]);
    const production = await startTestGateway({ MEMGATE_PRODUCTION: '1', MEMGATE_TOKENS_FILE: path });
    try {
      const [script] = readdirSync(join(GRAPHIQL_DIR, 'assets')).filter((f) => f.endsWith('.js'));
      const res = await fetch(new URL(`/graphiql/assets/${script}`, production.url));
      expect(res.status).toBe(404);
      expect((await res.text()).length).toBeLessThan(1000);
    } finally {
      await production.close();
    }
  });
});

describe('GraphQL responses', () => {
  const INTROSPECTION = '{ __schema { types { name kind description fields { name description } } } }';

  it('from 1 KiB, decompress to the same JSON in each coding', async () => {
    const identity = await postGraphQL(INTROSPECTION, 'identity');
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding');
    expect(identity.body.length).toBeGreaterThan(20_000);
    const json = JSON.parse(identity.body.toString());
    expect(json.data.__schema.types.length).toBeGreaterThan(50);
    for (const [acceptEncoding, expected] of NEGOTIATIONS) {
      const res = await postGraphQL(INTROSPECTION, acceptEncoding);
      expect(res.headers['content-encoding'] ?? null, acceptEncoding).toBe(expected);
      expect(Number(res.headers['content-length']), acceptEncoding).toBe(res.body.length);
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(res.headers['content-type']).toMatch(/^application\/graphql-response\+json/);
      if (expected) expect(res.body.length).toBeLessThan(identity.body.length / 3);
      expect(JSON.parse(decoded(res).toString()), acceptEncoding).toEqual(json);
    }
  });

  it('below 1 KiB, leave the body as it is', async () => {
    const res = await postGraphQL('{ __typename }', 'gzip, br');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBe('Accept-Encoding');
    expect(JSON.parse(res.body.toString())).toEqual({ data: { __typename: 'Query' } });
  });

  it('answer errors (a 400) compressed the same way when large', async () => {
    const unknown = Array.from({ length: 30 }, (_, i) => `nope${i}`).join(' ');
    const res = await postGraphQL(`{ ${unknown} }`, 'gzip');
    expect(res.status).toBe(400);
    expect(res.headers['content-encoding']).toBe('gzip');
    const body = JSON.parse(decoded(res).toString()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors).toHaveLength(30);
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('keep an SSE subscription streaming, uncompressed, while compression is on', async () => {
    const ns = `sse-compression-${Date.now()}`;
    const events: string[] = [];
    let headers: IncomingHttpHeaders | undefined;
    const req = request(`${origin}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'accept-encoding': 'gzip, br',
      },
    });
    req.on('response', (res) => {
      headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => events.push(chunk));
    });
    req.on('error', () => {});
    req.end(JSON.stringify({ query: LIVE_SUBSCRIPTION, variables: { ns } }));
    try {
      // Each write changes the entity; once the subscriber listens, its event arrives at once.
      let n = 0;
      while (!events.join('').includes('"entity":{"key":"ping"')) {
        n += 1;
        expect(n, 'an event within 10 s').toBeLessThan(100);
        const write = await gw.gql(
          `mutation { upsertEntities(namespace: "${ns}", entities: [{ key: "ping", kind: "note", title: "t${n}" }]) { accepted } }`,
        );
        expect(write.errors).toBeUndefined();
        await sleep(100);
      }
      expect(headers!['content-type']).toBe('text/event-stream');
      expect(headers!['content-encoding']).not.toMatch(/br|gzip/);
      const stream = events.join('');
      expect(stream).toContain('event: next');
      // Still open: the stream carried the event without ending.
      expect(stream).not.toContain('event: complete');
    } finally {
      req.destroy();
    }
  });
});

describe('in a browser', () => {
  let browser: Browser | undefined;
  afterAll(async () => browser?.close());

  it('GraphiQL starts from its compressed assets', async () => {
    browser = await launchChromium();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const codings = new Map<string, string | undefined>();
    page.on('response', (res) => {
      if (res.url().includes('/graphiql/assets/')) codings.set(res.url(), res.headers()['content-encoding']);
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    const response = await page.goto(`${origin}/graphql`);
    expect(response?.status()).toBe(200);
    // The editor holds the default query once GraphiQL and its workers are up.
    await page.getByText('Welcome to memgate').first().waitFor({ timeout: 30_000 });
    expect(errors).toEqual([]);
    const scripts = [...codings].filter(([url]) => /\.(js|css)$/.test(url));
    expect(scripts).toHaveLength(2);
    for (const [url, coding] of scripts) expect(['br', 'gzip'], url).toContain(coding);
  });
});
