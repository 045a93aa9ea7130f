import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { clusterEnv, sharedSetup } from '../helpers/cluster-env.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { type LiveResult, sleep, subscribe, untilListening } from '../helpers/live.js';

/**
 * memgate over a Patroni cluster (scripts/with-patroni.sh): a real gateway over HTTP whose
 * DATABASE_URL is HAProxy's primary frontend. While a write loop runs, the leader dies (kill -9
 * of its Patroni and postmaster, as a machine that fails) or hands over (a planned switchover).
 * Every write is answered either as written or as UNAVAILABLE (HTTP 503, retryable), never
 * INTERNAL_SERVER_ERROR; every acknowledged write is there afterwards; the LISTEN connection
 * comes back by itself, so a subscription opened before hears writes made after; /readyz is
 * ready again. The window of failed writes is printed.
 */

const NS = 'failover';
const run = promisify(execFile);

interface Member {
  name: string;
  role: string;
  state: string;
  api_url: string;
}

const cluster = sharedSetup(async () => {
  const url = clusterEnv('MEMGATE_TEST_PATRONI_URL');
  const rest = clusterEnv('MEMGATE_TEST_PATRONI_REST').split(',');
  const ctl = clusterEnv('MEMGATE_TEST_PATRONI_CTL');
  clusterEnv('MEMGATE_TEST_PATRONI_DIR');
  // The test helpers create the gateway's database from DATABASE_URL's template.
  if (process.env.DATABASE_URL !== url) {
    throw new Error('DATABASE_URL must be MEMGATE_TEST_PATRONI_URL, as scripts/with-patroni.sh exports it');
  }
  const gw = await startTestGateway({ MEMGATE_METRICS: '1' });
  return { gw, rest, ctl };
});
// Each test fails (not skips) when the cluster is missing.
beforeEach(() => cluster.get());
afterAll(async () => {
  await (await cluster.ifStarted())?.gw.close();
});

/** The cluster as any node that answers sees it. */
async function members(): Promise<Member[]> {
  const { rest } = await cluster.get();
  for (const base of rest) {
    try {
      const res = await fetch(`${base}/cluster`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return ((await res.json()) as { members: Member[] }).members;
    } catch {
      // that node is down: ask the next
    }
  }
  return [];
}

async function ctl(action: 'crash' | 'start', node: string): Promise<string> {
  const { stdout } = await run((await cluster.get()).ctl, ['--ctl', action, node], { timeout: 30_000 });
  return stdout.trim();
}

/** Polls `check` every 200 ms until it holds, for at most `ms`. */
async function waitFor(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Both nodes up: a leader and a synchronous standby streaming from it (a crashed node restarted). */
async function healthyPair(): Promise<{ leader: string; standby: string }> {
  const up = new Set((await members()).map((m) => m.name));
  for (const node of ['n1', 'n2']) if (!up.has(node)) await ctl('start', node);
  await waitFor(
    'a leader and a running sync standby',
    async () => {
      const roles = (await members()).filter((m) => m.state === 'running' || m.state === 'streaming');
      return roles.some((m) => m.role === 'leader') && roles.some((m) => m.role === 'sync_standby');
    },
    90_000,
  );
  const all = await members();
  return {
    leader: all.find((m) => m.role === 'leader')!.name,
    standby: all.find((m) => m.role === 'sync_standby')!.name,
  };
}

const RECORD = `mutation Record($ns: String!, $items: [ObservationInput!]!) {
  recordObservations(namespace: $ns, observations: $items) { accepted results { key status code message } }
}`;

interface RecordAnswer {
  status: number;
  accepted?: number;
  keys?: string[];
  /** The item's answer when it was not written: its status, code and message. */
  rejected?: { status: string; code: string | null; message: string | null };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  /** Set when the client gave up waiting, or the HTTP exchange itself failed. */
  transport?: string;
}

/** One observation, its marker in content and externalId, over HTTP. */
async function record(gw: TestGateway, marker: string): Promise<RecordAnswer> {
  try {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({
        query: RECORD,
        variables: {
          ns: NS,
          items: [
            {
              source: { system: 'failover-test', stream: 'loop', externalId: marker },
              kind: 'message',
              occurredAt: new Date().toISOString(),
              content: `write ${marker}`,
            },
          ],
        },
      }),
      signal: AbortSignal.timeout(25_000),
    });
    const body = (await res.json()) as {
      data?: {
        recordObservations: {
          accepted: number;
          results: { key: string; status: string; code: string | null; message: string | null }[];
        };
      } | null;
      errors?: RecordAnswer['errors'];
    };
    const item = body.data?.recordObservations.results[0];
    return {
      status: res.status,
      accepted: body.data?.recordObservations.accepted,
      keys: body.data?.recordObservations.results.map((r) => r.key),
      ...(item && body.data?.recordObservations.accepted !== 1
        ? { rejected: { status: item.status, code: item.code, message: item.message } }
        : {}),
      errors: body.errors,
    };
  } catch (error) {
    return { status: 0, transport: String(error) };
  }
}

interface Attempt {
  marker: string;
  /** When it was sent, and how long its answer took (ms). */
  at: number;
  ms: number;
  answer: RecordAnswer;
}

const acknowledged = (a: Attempt) => a.answer.status === 200 && !a.answer.errors && a.answer.accepted === 1;
const refusedAsUnavailable = (a: Attempt) =>
  a.answer.status === 503 &&
  (a.answer.errors?.length ?? 0) > 0 &&
  a.answer.errors!.every((e) => e.extensions?.code === 'UNAVAILABLE' && e.extensions?.retryable === true);

/**
 * Writes with `writers` concurrent loops, each write a fresh marker, until `stop` says so;
 * pauses 50 ms after a failed write.
 */
async function writeLoop(
  gw: TestGateway,
  label: string,
  stop: (attempts: Attempt[]) => boolean,
  writers = 2,
): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let n = 0;
  const deadline = Date.now() + 120_000;
  const loop = async (w: number) => {
    while (!stop(attempts) && Date.now() < deadline) {
      const marker = `${label}-${w}-${n++}`;
      const at = Date.now();
      const answer = await record(gw, marker);
      attempts.push({ marker, at, ms: Date.now() - at, answer });
      if (answer.status !== 200) await sleep(50);
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, w) => loop(w)));
  return attempts;
}

/** Stops once `event()` has happened and writes have succeeded for `calmMs` since the last failure. */
function afterRecovery(event: () => number | null, calmMs: number) {
  return (attempts: Attempt[]) => {
    const at = event();
    if (at === null) return false;
    const after = attempts.filter((a) => a.at >= at);
    const lastFailure = Math.max(at, ...after.filter((a) => !acknowledged(a)).map((a) => a.at));
    const calm = after.filter((a) => a.at > lastFailure && acknowledged(a));
    return calm.length >= 10 && Date.now() - lastFailure >= calmMs;
  };
}

/**
 * Prints what the write loop saw around the event at `at`: the answers by kind, the window of
 * failed writes (the first failed one sent to the last failed one answered), when writes were
 * acknowledged again, the slowest answer, and how many failed writes were stored all the same
 * (a commit whose answer was lost: a retry with the same externalId is DUPLICATE). Answers the
 * failed writes and those that were neither written nor UNAVAILABLE.
 */
function summarize(label: string, attempts: Attempt[], at: number, stored: Set<string>) {
  const failed = attempts.filter((a) => !acknowledged(a));
  const unexpected = failed.filter((a) => !refusedAsUnavailable(a));
  const kinds: Record<string, number> = {};
  for (const a of failed) {
    const kind =
      a.answer.transport ??
      (a.answer.rejected
        ? `${a.answer.status} item ${a.answer.rejected.status} ${a.answer.rejected.code}: ${a.answer.rejected.message}`
        : `${a.answer.status} ${String(a.answer.errors?.[0]?.extensions?.code)}`);
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  const rel = (t: number) => `${t - at >= 0 ? '+' : ''}${t - at} ms`;
  const span = failed.length
    ? `${rel(Math.min(...failed.map((a) => a.at)))} .. ${rel(Math.max(...failed.map((a) => a.at + a.ms)))} ` +
      `(${Math.max(...failed.map((a) => a.at + a.ms)) - Math.min(...failed.map((a) => a.at))} ms)`
    : 'none';
  const lastFailed = Math.max(at, ...failed.map((a) => a.at + a.ms));
  const backAt = attempts.filter((a) => acknowledged(a) && a.at >= lastFailed).map((a) => a.at + a.ms);
  const slowest = attempts.reduce((m, a) => (a.ms > m.ms ? a : m), attempts[0]!);
  console.log(
    `[${label}] ${attempts.length} writes: ${attempts.length - failed.length} acknowledged, ` +
      `${failed.length} failed ${JSON.stringify(kinds)} (${failed.filter((a) => stored.has(a.marker)).length} of them stored all the same); ` +
      `failed writes ${span} after the ${label}; acknowledged again from ${backAt.length ? rel(Math.min(...backAt)) : 'never'}; ` +
      `slowest answer ${slowest.ms} ms (sent ${rel(slowest.at)}, ${slowest.answer.status})`,
  );
  if (unexpected.length) {
    const times = unexpected.map((a) => a.at);
    console.log(
      `[${label}] ${unexpected.length} answers neither written nor UNAVAILABLE, sent ${rel(Math.min(...times))} .. ${rel(Math.max(...times))}; ` +
        `the first: ${JSON.stringify(unexpected[0])}`,
    );
  }
  return { failed, unexpected };
}

/** Every observation of the namespace, paged through the gateway. */
async function storedMarkers(gw: TestGateway): Promise<Set<string>> {
  const markers = new Set<string>();
  let after: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const res: { data?: unknown; errors?: unknown } = await gw.gql(
      `query($ns: String!, $after: String) { observations(namespace: $ns, first: 200, after: $after) {
        edges { node { content } } pageInfo { hasNextPage endCursor } } }`,
      { ns: NS, after },
    );
    expect(res.errors).toBeUndefined();
    const conn = (
      res.data as {
        observations: {
          edges: { node: { content: string } }[];
          pageInfo: { hasNextPage: boolean; endCursor: string };
        };
      }
    ).observations;
    for (const e of conn.edges) markers.add(e.node.content.replace(/^write /, ''));
    if (!conn.pageInfo.hasNextPage) break;
    after = conn.pageInfo.endCursor;
  }
  return markers;
}

async function readyz(gw: TestGateway): Promise<{ status: number; body: unknown }> {
  const res = await fetch(gw.url.replace(/\/graphql$/, '/readyz'));
  return { status: res.status, body: await res.json() };
}

async function untilReady(gw: TestGateway, ms: number): Promise<{ status: number; body: unknown }> {
  let ready = await readyz(gw);
  const deadline = Date.now() + ms;
  while (ready.status !== 200 && Date.now() < deadline) {
    await sleep(200);
    ready = await readyz(gw);
  }
  return ready;
}

/** Writes `count` observations once all is back, and answers their observation ids. */
async function writeAfter(gw: TestGateway, label: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await record(gw, `${label}-after-${i}`);
    expect(answer, JSON.stringify(answer)).toMatchObject({ status: 200, accepted: 1 });
    ids.push(answer.keys![0]!);
  }
  return ids;
}

/**
 * Reads the subscription until every id in `ids` arrived, the stream ended or `ms` passed.
 * Answers the ids heard and the codes of the error events met on the way: a change whose row
 * could not be read while the database was unreachable arrives as an UNAVAILABLE event, and
 * the subscription goes on.
 */
async function heard(
  live: AsyncIterator<LiveResult>,
  ids: string[],
  ms: number,
): Promise<{ heard: string[]; errors: string[]; ended: boolean }> {
  const got = new Set<string>();
  const errors: string[] = [];
  let ended = false;
  const deadline = sleep(ms).then(() => null);
  while (!ids.every((id) => got.has(id))) {
    const next = await Promise.race([live.next(), deadline]);
    if (next === null) break;
    if (next.done) {
      ended = true;
      break;
    }
    for (const e of next.value.errors ?? []) errors.push(String(e.extensions?.code));
    const change = next.value.data?.memoryChanged;
    if (change) got.add(change.key);
  }
  return { heard: ids.filter((id) => got.has(id)), errors, ended };
}

async function openSubscription(gw: TestGateway): Promise<AsyncIterableIterator<LiveResult>> {
  const live = subscribe('sse', gw.url, 'unused', { ns: NS, kinds: ['OBSERVATION'] });
  let n = 0;
  await untilListening(live, async () => {
    await record(gw, `ping-${Date.now()}-${n++}`);
  });
  return live;
}

/**
 * After a failover: every acknowledged write is stored, /readyz is ready with its listener up,
 * and the subscription opened before hears the writes made after (UNAVAILABLE events allowed).
 */
async function expectRecovered(
  label: string,
  gw: TestGateway,
  live: AsyncIterator<LiveResult>,
  attempts: Attempt[],
  stored: Set<string>,
): Promise<void> {
  const lost = attempts.filter(acknowledged).filter((a) => !stored.has(a.marker));
  expect(lost.map((a) => a.marker)).toEqual([]);

  const ready = await untilReady(gw, 30_000);
  expect(ready).toMatchObject({ status: 200, body: { status: 'ready', listener: { listening: true } } });

  const ids = await writeAfter(gw, label, 5);
  const hearing = await heard(live, ids, 20_000);
  console.log(
    `[${label}] subscription: ${hearing.heard.length} of the ${ids.length} later writes heard; error events ${JSON.stringify(hearing.errors)}${hearing.ended ? '; it ended' : ''}`,
  );
  expect(hearing.errors.filter((code) => code !== 'UNAVAILABLE')).toEqual([]);
  expect(hearing).toMatchObject({ heard: ids, ended: false });
}

describe('memgate over Patroni + HAProxy (scripts/with-patroni.sh)', () => {
  it('the leader dies during a write loop: writes fail only as UNAVAILABLE (503), none acknowledged is lost, the subscription and /readyz come back', async () => {
    const { gw } = await cluster.get();
    const { leader } = await healthyPair();
    const live = await openSubscription(gw);
    try {
      let crashedAt: number | null = null;
      const loop = writeLoop(
        gw,
        'crash',
        afterRecovery(() => crashedAt, 3000),
      );
      await sleep(2000);
      const t = Date.now();
      expect(await ctl('crash', 'leader')).toBe(leader);
      crashedAt = t;
      const attempts = await loop;

      const stored = await storedMarkers(gw);
      const { failed, unexpected } = summarize('crash', attempts, crashedAt, stored);
      expect(unexpected.map((a) => a.answer)).toEqual([]);
      // The crash did cut writes: the test saw a failover, not a quiet cluster.
      expect(failed.length).toBeGreaterThan(0);
      const after = await members();
      expect(after.find((m) => m.role === 'leader')?.name).not.toBe(leader);

      await expectRecovered('crash', gw, live, attempts, stored);
    } finally {
      await live.return?.();
    }
  }, 240_000);

  it('a planned switchover during a write loop loses no acknowledged write', async () => {
    const { gw, rest } = await cluster.get();
    const { leader, standby } = await healthyPair();
    await untilReady(gw, 30_000);
    const live = await openSubscription(gw);
    try {
      let switchedAt: number | null = null;
      const loop = writeLoop(
        gw,
        'switchover',
        afterRecovery(() => switchedAt, 3000),
      );
      await sleep(2000);
      const t = Date.now();
      let answer = '';
      for (const base of rest) {
        const res = await fetch(`${base}/switchover`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ leader, candidate: standby }),
          signal: AbortSignal.timeout(60_000),
        }).catch(() => null);
        if (res) {
          answer = `${res.status} ${await res.text()}`;
          if (res.ok) break;
        }
      }
      switchedAt = t;
      expect(answer).toMatch(/^200 /);
      const attempts = await loop;

      const stored = await storedMarkers(gw);
      const { unexpected } = summarize('switchover', attempts, switchedAt, stored);
      expect(unexpected.map((a) => a.answer)).toEqual([]);
      await waitFor(
        'the standby to lead',
        async () => (await members()).some((m) => m.role === 'leader' && m.name === standby),
        30_000,
      );

      await expectRecovered('switchover', gw, live, attempts, stored);
    } finally {
      await live.return?.();
    }
  }, 240_000);
});
