import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  type LiveChange,
  type LiveResult,
  TRANSPORTS,
  heapAfterGc,
  readUntil,
  sleep,
  subscribe,
  untilListening,
} from '../helpers/live.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * What a live subscriber is promised, through real SSE and WebSocket clients: bounded memory
 * however much is written and none kept once it closes; every event read afresh as the
 * subscriber, so an update arrives as written and a row moved out of its reach never arrives;
 * no event once its token is revoked; a bounded number of subscriptions per principal and per
 * process.
 */

let tokens: Record<string, string>;
let tokensPath: string;

beforeAll(() => {
  const written = writeTokensFile([
    { id: 'writer', read: ['acme'], write: ['acme'], scopes: ['*'] },
    { id: 'reader', read: ['acme'], scopes: ['*'] },
    { id: 'w1', read: ['acme'], scopes: ['workspace:w1'] },
    { id: 'other', read: ['acme'], scopes: ['*'] },
  ]);
  tokens = written.tokens;
  tokensPath = written.path;
});

async function upsert(gw: TestGateway, entities: unknown[], token = tokens.writer!): Promise<void> {
  const res = await gw.gql(
    'mutation($e: [EntityInput!]!) { upsertEntities(namespace: "acme", entities: $e) { accepted } }',
    { e: entities },
    { token },
  );
  expect(res.errors).toBeUndefined();
  expect(res.data).toMatchObject({ upsertEntities: { accepted: entities.length } });
}

/** Counts the `mem-` rows delivered until `key`, keeping none of them. */
async function countUntil(iterator: AsyncIterator<LiveResult>, key: string): Promise<number> {
  let count = 0;
  while (true) {
    const { value, done } = await iterator.next();
    if (done || value.errors) throw new Error(`stream ended before ${key}: ${JSON.stringify(value?.errors)}`);
    const change = value.data!.memoryChanged;
    if (change.key.startsWith('mem-')) count += 1;
    if (change.key === key) return count;
  }
}

const pinger = (gw: TestGateway) => (n: number) =>
  upsert(gw, [{ key: 'ping', kind: 'probe', title: `ping ${Date.now()}-${n}` }]);

describe('memory', () => {
  let gw: TestGateway;
  let subscribers: AsyncIterator<LiveResult>[] = [];
  beforeAll(async () => {
    // The client, the server and the embedded database share this process's event loop: while
    // 3,600 events are read afresh, a 800 KB batch may take longer to arrive than the 30 s
    // production default allows, and the loop may reach the keep-alive timer of the writer's idle
    // connection before the next batch it already sent. The test measures memory, not time.
    gw = await startTestGateway({
      MEMGATE_TOKENS_FILE: tokensPath,
      MEMGATE_TRACE_SQL: '0',
      MEMGATE_REQUEST_TIMEOUT_MS: '600000',
      MEMGATE_KEEP_ALIVE_TIMEOUT_MS: '600000',
    });
  });
  afterAll(async () => {
    // Open subscriptions hold their connections: a failed run must not leave them to the close.
    await Promise.allSettled(subscribers.map((s) => s.return?.()));
    await gw?.close();
  });

  it('6 read-only subscribers of 600 written rows of 4 KB: heap stays within budget and returns after close', async () => {
    subscribers = Array.from({ length: 6 }, (_, i) =>
      subscribe(i % 2 ? 'ws' : 'sse', gw.url, tokens.reader!, { ns: 'acme', kinds: ['ENTITY'] }),
    );
    for (const s of subscribers) await untilListening(s, pinger(gw));
    const baseline = await heapAfterGc();

    const blob = 'm'.repeat(4096);
    // Counted, not kept: the test itself must hold none of the rows it measures.
    const draining = subscribers.map((s) => countUntil(s, 'mem-2-199'));
    for (let batch = 0; batch < 3; batch++) {
      await upsert(
        gw,
        Array.from({ length: 200 }, (_, i) => ({
          key: `mem-${batch}-${i}`,
          kind: 'note',
          title: `row ${i}`,
          attributes: { blob: `${blob}${batch}-${i}` },
        })),
      );
    }
    const received = await Promise.all(draining);
    expect(received.every((count) => count === 600)).toBe(true);
    const open = await heapAfterGc();

    for (const s of subscribers) await s.return?.();
    // Nothing is written after the close: a subscription must let go without a further event.
    for (let i = 0; i < 50 && gw.app.deps.changes!.active > 0; i++) await sleep(100);
    const closed = await heapAfterGc();

    // 3,600 events of 4 KB rows: a cache kept per subscription would hold 15+ MB.
    expect(open - baseline).toBeLessThan(8);
    expect(closed - baseline).toBeLessThan(4);
    expect(gw.app.deps.changes!.active).toBe(0);
  }, 240_000);
});

describe('every event read afresh as the subscriber', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: tokensPath });
  });
  afterAll(async () => {
    await gw?.close();
  });

  for (const transport of TRANSPORTS) {
    it(`${transport}: an update arrives as written, a row moved out of reach never arrives again`, async () => {
      const tag = `fresh-${transport}-${Date.now()}`;
      const live = subscribe(transport, gw.url, tokens.w1!, { ns: 'acme' });
      await untilListening(live, pinger(gw));
      // An unscoped row is visible to every reader; scoping it to w2 takes it out of w1's reach.
      const entity = (title: string, scopes: string[] = []) => ({
        key: `${tag}-x`,
        kind: 'note',
        title,
        scopes,
      });
      const fact = async (predicate: string) => {
        const res = await gw.gql(
          `mutation { assertFacts(namespace: "acme", facts: [{ subject: "${tag}-a", predicate: "${predicate}", object: "${tag}-x" }]) { accepted } }`,
          {},
          { token: tokens.writer },
        );
        expect(res.errors).toBeUndefined();
      };
      // Each event is read when it is delivered, so a version is only seen as written if the
      // next write waits for it: a marker row, read back, ends each step.
      const seen: LiveChange[] = [];
      const delivered = async (marker: string) => {
        await upsert(gw, [{ key: `${tag}-${marker}`, kind: 'note', title: marker }]);
        seen.push(...(await readUntil(live, `${tag}-${marker}`)));
      };
      await upsert(gw, [{ key: `${tag}-a`, kind: 'note', title: 'anchor', scopes: ['workspace:w1'] }]);
      await upsert(gw, [entity('v1 visible')]);
      await fact('cites_v1');
      await delivered('v1-seen');
      await upsert(gw, [entity('v2 visible')]);
      await fact('cites_v2');
      await delivered('v2-seen');
      await upsert(gw, [entity('v3 moved away', ['workspace:w2'])]);
      await fact('cites_v3');
      await upsert(gw, [entity('v4 still away', ['workspace:w2'])]);
      await delivered('end');
      await live.return?.();
      const titles = seen.filter((c) => c.key === `${tag}-x`).map((c) => c.entity?.title);
      expect(titles).toEqual(['v1 visible', 'v2 visible']);
      // A nested read of the event is as fresh as the event's own row.
      const cited = seen
        .filter((c) => c.kind === 'FACT')
        .map((c) => [c.fact!.predicate, c.fact!.object?.title]);
      expect(cited).toEqual([
        ['cites_v1', 'v1 visible'],
        ['cites_v2', 'v2 visible'],
      ]);
      expect(JSON.stringify(seen)).not.toMatch(/moved away|still away|cites_v3/);
      const now = await gw.gql(
        `{ entity(namespace: "acme", key: "${tag}-x") { title } }`,
        {},
        { token: tokens.w1 },
      );
      expect(now.data).toEqual({ entity: null });
    });
  }
});

describe('a revoked token', () => {
  for (const transport of TRANSPORTS) {
    it(`${transport}: no event once the gateway refuses the token; the stream ends UNAUTHENTICATED`, async () => {
      const own = writeTokensFile([
        { id: 'writer', read: ['acme'], write: ['acme'], scopes: ['*'] },
        { id: 'temp', read: ['acme'] },
      ]);
      const gw = await startTestGateway({ MEMGATE_TOKENS_FILE: own.path });
      try {
        const write = (key: string) => upsert(gw, [{ key, kind: 'note', title: key }], own.tokens.writer!);
        const live = subscribe(transport, gw.url, own.tokens.temp!, { ns: 'acme' });
        await untilListening(live, (n) => write(`ping-${n}`).then(() => undefined));
        const file = JSON.parse(readFileSync(own.path, 'utf8')) as { principals: { id: string }[] };
        file.principals = file.principals.filter((p) => p.id !== 'temp');
        writeFileSync(own.path, JSON.stringify(file, null, 2));
        while ((await gw.gql('{ __typename }', {}, { token: own.tokens.temp })).status !== 401)
          await sleep(50);

        for (let i = 0; i < 5; i++) await write(`after-revocation-${i}`);
        const delivered: LiveChange[] = [];
        let ending: LiveResult['errors'];
        for await (const result of live) {
          if (result.errors) {
            ending = result.errors;
            break;
          }
          delivered.push(result.data!.memoryChanged);
        }
        expect(delivered.map((c) => c.key).filter((k) => k.startsWith('after-revocation'))).toEqual([]);
        expect(ending?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      } finally {
        await gw.close();
      }
    }, 60_000);
  }
});

describe('subscription caps', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      MEMGATE_TOKENS_FILE: tokensPath,
      MEMGATE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL: '2',
      MEMGATE_MAX_SUBSCRIPTIONS: '3',
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const refusal = async (iterator: AsyncIterator<LiveResult>) => {
    const { value } = await iterator.next();
    await iterator.return?.();
    return value?.errors?.[0];
  };

  it('per principal and per process, LIMIT_EXCEEDED beyond either; a closed one frees its place', async () => {
    const open = (transport: 'sse' | 'ws', token: string) =>
      subscribe(transport, gw.url, token, { ns: 'acme' });
    const mine = [open('sse', tokens.reader!), open('ws', tokens.reader!)];
    for (const s of mine) await untilListening(s, pinger(gw));

    const third = await refusal(open('sse', tokens.reader!));
    expect(third?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(third?.message).toMatch(/per principal/);
    expect((await refusal(open('ws', tokens.reader!)))?.extensions?.code).toBe('LIMIT_EXCEEDED');

    const others = open('ws', tokens.other!);
    await untilListening(others, pinger(gw));
    const beyondProcess = await refusal(open('sse', tokens.w1!));
    expect(beyondProcess?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(beyondProcess?.message).toMatch(/maximum of 3/);

    await mine[0]!.return?.();
    for (let i = 0; i < 50 && gw.app.deps.changes!.active > 2; i++) await sleep(100);
    const again = open('sse', tokens.reader!);
    const first = await untilListening(again, pinger(gw));
    expect(first.errors).toBeUndefined();
    for (const s of [again, mine[1]!, others]) await s.return?.();
  }, 60_000);
});
