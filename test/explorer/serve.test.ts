import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLORER_DIR } from '../../src/http-explorer.js';
import { launchChromium } from '../helpers/browser.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * /explore serves the built page (dist/explorer, from `npm run build`) as static files: every
 * asset local and inside the budget, nothing outside the build folder, the page public while
 * /graphql still wants the token.
 */

const BUDGET_BYTES = 500 * 1024;
let gw: TestGateway;
let origin: string;

beforeAll(async () => {
  const { path } = writeTokensFile([{ id: 'reader', read: ['shop'] }]);
  gw = await startTestGateway({ MEMGATE_TOKENS_FILE: path });
  origin = new URL(gw.url).origin;
});
afterAll(async () => gw?.close());

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe('/explore', () => {
  it('is built, and its bundle is at most 500 kB gzipped', () => {
    // The build's files, not the brotli and gzip variants written beside them.
    const built = files(EXPLORER_DIR).filter((f) => !/\.(br|gz)$/.test(f));
    expect(built.some((f) => f.endsWith('index.html'))).toBe(true);
    const gzipped = built.reduce((sum, f) => sum + gzipSync(readFileSync(f), { level: 9 }).length, 0);
    console.log(`explorer bundle: ${built.length} files, ${(gzipped / 1024).toFixed(1)} kB gzipped`);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('serves the page and its hashed assets from this origin only, with a strict policy', async () => {
    const redirect = await fetch(`${origin}/explore?namespace=shop`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/explore/?namespace=shop');

    const page = await fetch(`${origin}/explore/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    // Its own icon: without one the browser asks /favicon.ico and logs a 404.
    expect(html).toMatch(/<link rel="icon" type="image\/svg\+xml" href="\/explore\/assets\/[^"]+\.svg"/);
    for (const asset of assets) {
      expect(asset.startsWith('/explore/assets/')).toBe(true);
      const res = await fetch(`${origin}${asset}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toContain('immutable');
      expect(res.headers.get('content-type')).toMatch(/^(text\/(javascript|css)|image\/svg\+xml)/);
      // No CDN: the bundle names no other origin to load code or styles from.
      expect(await res.text()).not.toMatch(/(?:import|@import|src=)\s*\(?["']https?:\/\//);
    }
  });

  it('answers nothing outside the build folder, and only GET and HEAD', async () => {
    for (const path of [
      '/explore/../package.json',
      '/explore/%2e%2e/package.json',
      '/explore/..%2fpackage.json',
      '/explore/assets/nope.js',
      '/explore/%00',
      '/explore/index.ts',
    ]) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('"name": "memgate"');
    }
    const post = await fetch(`${origin}/explore/`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    const head = await fetch(`${origin}/explore/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('is public while the data behind it still needs the token', async () => {
    expect((await fetch(`${origin}/explore/`)).status).toBe(200);
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ entities(namespace: "shop") { totalCount } }' }),
    });
    const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('needs Chromium: without it the browser tests fail (never skip) and say how to install it', async () => {
    await expect(launchChromium('/nonexistent/chromium')).rejects.toThrow(/apt-get install -y chromium/);
  });
});
