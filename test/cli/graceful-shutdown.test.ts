import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exitOf, killGatewayProcesses, startGatewayProcess } from '../helpers/gateway-process.js';
import { type LiveResult, TRANSPORTS, subscribe, untilListening } from '../helpers/live.js';
import { writeTokensFile } from '../helpers/principals.js';
import { openTestDatabase } from '../helpers/test-database.js';

/**
 * SIGTERM to a gateway process with live subscriptions open (SSE and WebSocket): each ends with
 * UNAVAILABLE, telling its client to subscribe again, and the process exits 0 at once instead of
 * waiting on the open streams until its 15-second deadline kills it with exit code 1.
 */

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  killGatewayProcesses();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function location(): Promise<Record<string, string>> {
  if (process.env.DATABASE_URL) {
    const db = await openTestDatabase();
    cleanups.push(() => db.close());
    return { DATABASE_URL: db.url! };
  }
  const dir = mkdtempSync(join(tmpdir(), 'memgate-shutdown-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return { MEMGATE_DATA_DIR: join(dir, 'data') };
}

/** What a subscription gives next: an error code, or that it ended without one. */
async function endingOf(live: AsyncIterator<LiveResult>): Promise<string> {
  for (;;) {
    const next = await live.next().catch((error: unknown) => ({ thrown: String(error) }));
    if ('thrown' in next) return `thrown: ${next.thrown}`;
    if (next.done) return 'done';
    const code = next.value.errors?.[0]?.extensions?.code;
    if (code) return String(code);
  }
}

describe('SIGTERM with live subscriptions open', () => {
  it('ends every subscription with UNAVAILABLE and exits 0 without waiting on them', async () => {
    const { path, tokens } = writeTokensFile([
      { id: 'agent', read: ['live'], write: ['live'], scopes: ['*'] },
    ]);
    const { child, url } = await startGatewayProcess({ ...(await location()), MEMGATE_TOKENS_FILE: path });
    const ping = async (n: number) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.agent}` },
        body: JSON.stringify({
          query: `mutation { upsertEntities(namespace: "live", entities: [{ key: "ping", kind: "probe", title: "ping ${n}" }]) { accepted } }`,
        }),
      });
      expect(res.status).toBe(200);
    };
    const subscriptions = TRANSPORTS.map((t) => subscribe(t, url, tokens.agent!, { ns: 'live' }));
    for (const live of subscriptions) await untilListening(live, ping);

    const started = Date.now();
    child.kill('SIGTERM');
    const endings = await Promise.all(subscriptions.map(endingOf));
    const exit = await exitOf(child);
    const took = Date.now() - started;

    expect(Object.fromEntries(TRANSPORTS.map((t, i) => [t, endings[i]]))).toEqual({
      sse: 'UNAVAILABLE',
      ws: 'UNAVAILABLE',
    });
    expect(exit).toEqual({ code: 0, signal: null });
    // The open streams no longer hold the close until the 15-second deadline.
    expect(took).toBeLessThan(10_000);
    for (const live of subscriptions) await live.return?.();
  }, 90_000);
});
