import v8 from 'node:v8';
import vm from 'node:vm';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';

/** Live subscriptions through the real clients, over SSE and over WebSocket, read alike. */

export interface LiveChange {
  namespace: string;
  kind: string;
  key: string;
  removed: boolean;
  entity: { key: string; title: string; attributes?: unknown } | null;
  fact: { factId: string; predicate: string; object: { key: string; title: string } | null } | null;
}

export type LiveResult = {
  data?: { memoryChanged: LiveChange } | null;
  errors?: readonly { message: string; extensions?: { code?: unknown } }[];
};

export const LIVE_SUBSCRIPTION = `subscription Live($ns: String!, $kinds: [MemoryChangeKind!]) {
  memoryChanged(namespace: $ns, kinds: $kinds) {
    namespace kind key removed
    entity { key title attributes }
    fact { factId predicate object { key title } }
  }
}`;

export type Transport = 'sse' | 'ws';
export const TRANSPORTS: readonly Transport[] = ['sse', 'ws'];

/** Opens a subscription; graphql-ws's thrown operation errors come back as a result, like SSE's. */
export function subscribe(
  transport: Transport,
  url: string,
  token: string,
  variables: Record<string, unknown>,
  query = LIVE_SUBSCRIPTION,
): AsyncIterableIterator<LiveResult> {
  if (transport === 'sse') {
    const client = createSseClient({ url, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
    return client.iterate({ query, variables }) as AsyncIterableIterator<LiveResult>;
  }
  const client = createWsClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
  });
  const inner = client.iterate({ query, variables }) as AsyncIterableIterator<LiveResult>;
  let failed = false;
  const wrapped: AsyncIterableIterator<LiveResult> = {
    async next() {
      if (failed) return { value: undefined, done: true };
      try {
        return await inner.next();
      } catch (error) {
        if (!Array.isArray(error)) throw new Error(`websocket failed: ${String(error)}`);
        failed = true;
        return { value: { errors: error }, done: false };
      }
    },
    async return() {
      await inner.return?.();
      await client.dispose();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes a changing `ping` entity (through `writePing`) until the subscription delivers one:
 * the subscriber is then listening. Returns the first result.
 */
export async function untilListening(
  iterator: AsyncIterator<LiveResult>,
  writePing: (n: number) => Promise<void>,
): Promise<LiveResult> {
  const first = iterator.next();
  for (let n = 0; n < 100; n++) {
    await writePing(n);
    const arrived = await Promise.race([first.then(() => true), sleep(100).then(() => false)]);
    if (arrived) return (await first).value as LiveResult;
  }
  throw new Error('the subscription never started');
}

/** Reads changes, pings skipped, until one with `key` arrives or the stream ends with an error. */
export async function readUntil(iterator: AsyncIterator<LiveResult>, key: string): Promise<LiveChange[]> {
  const seen: LiveChange[] = [];
  while (true) {
    const { value, done } = await iterator.next();
    if (done) throw new Error(`stream ended before ${key}`);
    if (value.errors) throw new Error(`stream failed before ${key}: ${JSON.stringify(value.errors)}`);
    const change = value.data!.memoryChanged;
    if (change.key === 'ping') continue;
    seen.push(change);
    if (change.key === key) return seen;
  }
}

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** Heap in use after full collections, in MB: what the process still holds. */
export async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    collectGarbage();
    await sleep(50);
  }
  collectGarbage();
  return process.memoryUsage().heapUsed / 1e6;
}
