import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

/** Writes `request` on a raw socket and resolves with everything received until the server closes. */
function rawExchange(url: string, request: string): Promise<{ response: string; ms: number }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let response = '';
    socket.on('data', (d) => (response += d));
    socket.on('error', reject);
    socket.on('close', () => resolve({ response, ms: performance.now() - started }));
  });
}

describe('clients that never finish a request are cut off', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      MEMGATE_REQUEST_TIMEOUT_MS: '1000',
      MEMGATE_KEEP_ALIVE_TIMEOUT_MS: '1000',
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a HEAD request declaring a body that never comes gets 408 and a closed connection', async () => {
    const { response } = await rawExchange(
      gw.url,
      'HEAD /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n',
    );
    expect(response).toMatch(/^HTTP\/1\.1 408/);
  }, 10_000);

  it('headers that never end are cut off too', async () => {
    const { response } = await rawExchange(gw.url, 'POST /graphql HTTP/1.1\r\nHost: localhost\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 408/);
  }, 10_000);

  it('an idle keep-alive connection is closed after MEMGATE_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const { response, ms } = await rawExchange(
      gw.url,
      'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n',
    );
    expect(response).toMatch(/^HTTP\/1\.1 200/);
    expect(response).toMatch(/keep-alive: timeout=1/i);
    expect(ms).toBeGreaterThanOrEqual(900);
  }, 10_000);

  it('the server still answers afterwards', async () => {
    const res = await gw.gql('{ __typename }');
    expect(res.data).toEqual({ __typename: 'Query' });
  });
});
