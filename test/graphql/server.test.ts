import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

describe('the HTTP server', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });
  const base = () => gw.url.replace(/\/graphql$/, '');

  it('answers /healthz without a database round trip and /readyz when migrated', async () => {
    const health = await fetch(`${base()}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base()}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
  });

  it('serves GraphiQL with its assets from this origin (no CDN)', async () => {
    const res = await fetch(gw.url, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/<html/i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);
    for (const [, asset] of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect(asset).toMatch(/^\/graphiql\/assets\//);
      expect((await fetch(new URL(asset!, gw.url))).status).toBe(200);
    }
  });

  it('speaks application/graphql-response+json', async () => {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.headers.get('content-type')).toMatch(/application\/graphql-response\+json/);
    expect(await res.json()).toMatchObject({ data: { __typename: 'Query' } });
  });

  it('refuses bodies above the configured size with a coded error', async () => {
    const huge = 'x'.repeat(9 * 1024 * 1024);
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ __typename }`, variables: { huge } }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('LIMIT_EXCEEDED');
    const after = await gw.gql('{ __typename }');
    expect(after.data).toEqual({ __typename: 'Query' });
  });
});
