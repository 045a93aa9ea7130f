import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { TEST_EMBEDDING } from '../helpers/test-database.js';

/**
 * Live updates through real clients: graphql-sse over SSE, graphql-ws over WebSocket. Every
 * subscriber is told only of rows it could read; on native PostgreSQL a second gateway process
 * on the same database hears writes made on the first (LISTEN/NOTIFY).
 */

const SUBSCRIPTION = `subscription Live($ns: String!, $kinds: [MemoryChangeKind!], $keys: [String!]) {
  memoryChanged(namespace: $ns, kinds: $kinds, entityKeys: $keys) {
    namespace kind key removed
    entity { key title }
    fact { factId predicate object { key } }
    observation { observationId content }
    document { key content }
  }
}`;

interface Change {
  namespace: string;
  kind: string;
  key: string;
  removed: boolean;
  entity: { key: string; title: string } | null;
  fact: { factId: string; predicate: string } | null;
  observation: { observationId: string; content: string } | null;
  document: { key: string; content: string } | null;
}
type Result = {
  data?: { memoryChanged: Change } | null;
  errors?: readonly { message: string; extensions?: { code?: unknown } }[];
};

let gw: TestGateway;
let tokens: Record<string, string>;
let tokensPath: string;
let tick = 0;

async function write(
  query: string,
  variables: Record<string, unknown> = {},
  on: TestGateway | { url: string } = gw,
) {
  const res = await fetch(on.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.writer}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { errors?: unknown };
  expect(body.errors).toBeUndefined();
}

const upsert = (entities: unknown[], on?: TestGateway | { url: string }) =>
  write(
    'mutation($e: [EntityInput!]!) { upsertEntities(namespace: "acme", entities: $e) { accepted } }',
    { e: entities },
    on,
  );

/** Writes a changing ping until the subscription delivers it: the subscriber is then listening. */
async function ready(iterator: AsyncIterator<Result>, on?: TestGateway | { url: string }): Promise<void> {
  const first = iterator.next();
  for (let attempt = 0; attempt < 100; attempt++) {
    tick += 1;
    await upsert([{ key: 'ping', kind: 'probe', title: `ping ${tick}` }], on);
    const arrived = await Promise.race([first.then(() => true), sleep(100).then(() => false)]);
    if (arrived) return;
  }
  throw new Error('the subscription never started');
}

/** Reads changes until one with `key` arrives (pings skipped). */
async function until(iterator: AsyncIterator<Result>, key: string): Promise<Change[]> {
  const seen: Change[] = [];
  while (true) {
    const { value, done } = await iterator.next();
    if (done) throw new Error(`stream ended before ${key}`);
    expect(value.errors).toBeUndefined();
    const change = value.data!.memoryChanged;
    if (change.key === 'ping') continue;
    seen.push(change);
    if (change.key === key) return seen;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sse(url: string, token?: string) {
  return createSseClient({
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
}

function ws(url: string, token?: string) {
  return createWsClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

const TRANSPORTS = {
  sse: (url: string, token: string, variables: Record<string, unknown>) =>
    sse(url, token).iterate({ query: SUBSCRIPTION, variables }) as AsyncIterableIterator<Result>,
  ws: (url: string, token: string, variables: Record<string, unknown>) =>
    errorsAsResults(
      ws(url, token).iterate({ query: SUBSCRIPTION, variables }) as AsyncIterableIterator<Result>,
    ),
};

/** graphql-ws throws an operation's errors; SSE yields them. Both read alike here. */
function errorsAsResults(inner: AsyncIterableIterator<Result>): AsyncIterableIterator<Result> {
  let failed = false;
  const wrapped: AsyncIterableIterator<Result> = {
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
    return: async () => (await inner.return?.()) ?? { value: undefined, done: true },
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}

beforeAll(async () => {
  const written = writeTokensFile([
    { id: 'writer', read: ['acme'], write: ['acme'], scopes: ['*'] },
    { id: 'w1', read: ['acme'], scopes: ['workspace:w1'] },
    { id: 'none', read: ['acme'] },
    { id: 'outsider', read: ['elsewhere'] },
    { id: 'cleared', read: ['acme'], scopes: ['*'], pii: true },
  ]);
  tokens = written.tokens;
  tokensPath = written.path;
  gw = await startTestGateway({ MEMGATE_TOKENS_FILE: tokensPath });
});
afterAll(async () => {
  await gw?.close();
});

describe('memoryChanged', () => {
  for (const [name, open] of Object.entries(TRANSPORTS)) {
    it(`${name}: each kind arrives after commit, read as the subscriber; hidden rows never arrive`, async () => {
      const w1 = open(gw.url, tokens.w1!, { ns: 'acme' });
      const none = open(gw.url, tokens.none!, { ns: 'acme' });
      await ready(w1);
      await ready(none);
      const tag = `${name}-${Date.now()}`;
      await upsert([
        { key: `${tag}-secret`, kind: 'note', title: 'sapphire secret', scopes: ['workspace:w1'] },
        { key: `${tag}-public`, kind: 'note', title: 'mail bob@example.com' },
      ]);
      await write(
        `mutation { assertFacts(namespace: "acme", facts: [{ subject: "${tag}-public", predicate: "links", object: "${tag}-secret" }]) { accepted } }`,
      );
      await write(
        `mutation { recordObservations(namespace: "acme", observations: [{ source: { system: "t", externalId: "${tag}" }, kind: "note", occurredAt: "2026-01-01T00:00:00Z", content: "observed ${tag}" }]) { accepted } }`,
      );
      await upsert([{ key: `${tag}-end`, kind: 'note', title: 'end' }]);

      const forW1 = await until(w1, `${tag}-end`);
      const forNone = await until(none, `${tag}-end`);
      await w1.return?.();
      await none.return?.();

      expect(forW1.map((c) => c.kind).sort()).toEqual(['ENTITY', 'ENTITY', 'ENTITY', 'FACT', 'OBSERVATION']);
      expect(JSON.stringify(forW1)).toContain('sapphire');
      // The fact links to the w1 entity: for `none` it is hidden like the entity itself.
      expect(forNone.map((c) => c.kind).sort()).toEqual(['ENTITY', 'ENTITY', 'OBSERVATION']);
      expect(JSON.stringify(forNone)).not.toContain('sapphire');
      expect(JSON.stringify(forNone)).not.toContain(`${tag}-secret`);
      // PII is masked on the way out, as on every /graphql field.
      expect(JSON.stringify(forNone)).toContain('[email]');
      expect(JSON.stringify(forNone)).not.toContain('bob@example.com');
    });
  }

  it('kinds and entityKeys narrow the stream', async () => {
    const tag = `filter-${Date.now()}`;
    const it1 = TRANSPORTS.ws(gw.url, tokens.w1!, { ns: 'acme', kinds: ['FACT'], keys: [`${tag}-a`] });
    // ready() needs an event through the filter: a fact about the watched entity.
    await upsert([
      { key: `${tag}-a`, kind: 'note' },
      { key: `${tag}-b`, kind: 'note' },
    ]);
    const first = it1.next();
    let n = 0;
    while (!(await Promise.race([first.then(() => true), sleep(100).then(() => false)]))) {
      n += 1;
      await write(
        `mutation { assertFacts(namespace: "acme", facts: [{ subject: "${tag}-a", predicate: "p${n}", object: "${tag}-b" }]) { accepted } }`,
      );
      if (n > 50) throw new Error('never started');
    }
    await upsert([{ key: `${tag}-a`, kind: 'note', title: 'changed' }]);
    await write(
      `mutation { assertFacts(namespace: "acme", facts: [{ subject: "${tag}-b", predicate: "other", object: "${tag}-b" }]) { accepted } }`,
    );
    await write(
      `mutation { assertFacts(namespace: "acme", facts: [{ subject: "${tag}-b", predicate: "last", object: "${tag}-a" }]) { accepted } }`,
    );
    const { value } = await it1.next();
    await it1.return?.();
    // The entity change (kind ENTITY) and the fact not touching `a` were skipped.
    expect(value!.data!.memoryChanged.kind).toBe('FACT');
    expect(value!.data!.memoryChanged.fact!.predicate).toMatch(/^(p\d+|last)$/);
  });

  it('same authentication and read rights as /graphql', async () => {
    const anonymous = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION, variables: { ns: 'acme' } }),
    });
    expect(anonymous.status).toBe(401);
    await anonymous.body?.cancel();

    const closed = await new Promise<number>((resolve) => {
      const socket = new WebSocket(gw.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
      socket.on('close', (code) => resolve(code));
    });
    expect(closed).toBe(4403);

    // A message is bounded like an HTTP body (MEMGATE_MAX_BODY_BYTES): yoga does not check again.
    const tooLarge = await new Promise<number>((resolve) => {
      const socket = new WebSocket(gw.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
      socket.on('open', () => socket.send('x'.repeat(gw.app.deps.config.maxBodyBytes + 1)));
      socket.on('close', (code) => resolve(code));
    });
    expect(tooLarge).toBe(1009);

    for (const open of Object.values(TRANSPORTS)) {
      const { value } = await open(gw.url, tokens.outsider!, { ns: 'acme' }).next();
      expect(value!.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });
});

describe('every write path is heard', () => {
  const mutate = (query: string, variables: Record<string, unknown> = {}) => write(query, variables);

  it('assertions of an observation, document links, snapshots and purges all arrive', async () => {
    const tag = `paths-${Date.now()}`;
    const w1 = TRANSPORTS.sse(gw.url, tokens.w1!, { ns: 'acme' });
    const none = TRANSPORTS.ws(gw.url, tokens.none!, { ns: 'acme' });
    await ready(w1);
    await ready(none);
    // An observation whose assertions create an entity and a fact in the same transaction.
    await mutate(
      `mutation($o: [ObservationInput!]!) { recordObservations(namespace: "acme", observations: $o) { accepted } }`,
      {
        o: [
          {
            source: { system: 't', externalId: tag },
            kind: 'note',
            occurredAt: '2026-02-01T00:00:00Z',
            content: `asserted ${tag}`,
            assertions: [
              { entity: { key: `${tag}-person`, kind: 'person', title: 'Dana' } },
              { fact: { subject: `${tag}-person`, predicate: 'works_on', object: `${tag}-person` } },
            ],
          },
        ],
      },
    );
    // A document whose link becomes a LINKS_TO fact.
    await mutate(
      `mutation($d: [DocumentInput!]!) { retainDocuments(namespace: "acme", documents: $d) { accepted } }`,
      { d: [{ key: `${tag}-doc`, title: 'Runbook', content: 'How to restart.', links: [`${tag}-person`] }] },
    );
    // A snapshot that creates an entity and a relation.
    await mutate(
      `mutation($s: SnapshotInput!) { reconcileSnapshot(namespace: "acme", snapshot: $s) { staleEntities } }`,
      {
        s: {
          snapshotId: `${tag}-s1`,
          scope: `${tag}-scope`,
          observedAt: '2026-02-02T00:00:00Z',
          entities: [{ key: `${tag}-svc`, kind: 'service', title: 'billing' }],
          relations: [{ subject: `${tag}-svc`, relation: 'owned_by', object: `${tag}-person` }],
        },
      },
    );
    // A purge of an entity only w1 may see, and of one everybody may see.
    await upsert([
      { key: `${tag}-hidden`, kind: 'note', title: 'w1 only', scopes: ['workspace:w1'] },
      { key: `${tag}-open`, kind: 'note', title: 'open' },
    ]);
    for (const key of [`${tag}-hidden`, `${tag}-open`]) {
      await mutate(
        `mutation($k: String!) { purgeEntity(namespace: "acme", key: $k, reason: "test") { accepted } }`,
        { k: key },
      );
    }
    await upsert([{ key: `${tag}-end`, kind: 'note', title: 'end' }]);

    const seen = await until(w1, `${tag}-end`);
    const forNone = await until(none, `${tag}-end`);
    await w1.return?.();
    await none.return?.();
    const has = (kind: string, pred: (c: Change) => boolean) => seen.some((c) => c.kind === kind && pred(c));
    expect(has('OBSERVATION', (c) => c.observation?.content === `asserted ${tag}`)).toBe(true);
    expect(has('ENTITY', (c) => c.key === `${tag}-person`)).toBe(true);
    expect(has('FACT', (c) => c.fact?.predicate === 'works_on')).toBe(true);
    expect(has('DOCUMENT', (c) => c.key === `${tag}-doc`)).toBe(true);
    expect(has('FACT', (c) => c.fact?.predicate === 'LINKS_TO')).toBe(true);
    expect(has('ENTITY', (c) => c.key === `${tag}-svc`)).toBe(true);
    expect(has('FACT', (c) => c.fact?.predicate === 'owned_by')).toBe(true);
    // Removed rows arrive as `removed`, without a row, only to subscribers who could see them.
    const removed = seen.filter((c) => c.removed).map((c) => c.key);
    expect(removed).toEqual(expect.arrayContaining([`${tag}-hidden`, `${tag}-open`]));
    expect(seen.find((c) => c.key === `${tag}-open` && c.removed)?.entity).toBeNull();
    const removedForNone = forNone.filter((c) => c.removed).map((c) => c.key);
    expect(removedForNone).toContain(`${tag}-open`);
    expect(JSON.stringify(forNone)).not.toContain(`${tag}-hidden`);
  });

  it('personal data served over a subscription is audited per event, like any response', async () => {
    const piiAccess = async () =>
      (
        await gw.db.query<{ principal_id: string; target: string | null; summary: { categories: string[] } }>(
          `SELECT principal_id, target, summary FROM audit_log WHERE action = 'pii_access' ORDER BY audit_id`,
        )
      ).rows.filter((r) => r.principal_id === 'cleared');
    const tag = `pii-${Date.now()}`;
    const cleared = TRANSPORTS.sse(gw.url, tokens.cleared!, { ns: 'acme' });
    await ready(cleared);
    const before = (await piiAccess()).length;
    await upsert([{ key: `${tag}-mail`, kind: 'note', title: 'write to carol@example.com' }]);
    const changes = await until(cleared, `${tag}-mail`);
    await cleared.return?.();
    expect(changes.at(-1)!.entity!.title).toBe('write to carol@example.com');
    const records = await piiAccess();
    expect(records.length).toBeGreaterThan(before);
    expect(records.at(-1)!.target).toBe('Live');
    expect(records.at(-1)!.summary.categories).toContain('email');
  });
});

describe('a revoked token', () => {
  for (const [name, open] of Object.entries(TRANSPORTS)) {
    it(`${name}: ends its open subscription with UNAUTHENTICATED`, async () => {
      const own = writeTokensFile([
        { id: 'writer', read: ['acme'], write: ['acme'], scopes: ['*'] },
        { id: 'temp', read: ['acme'] },
      ]);
      const local = await startTestGateway({ MEMGATE_TOKENS_FILE: own.path });
      try {
        const onLocal = { url: local.url };
        const previous = tokens;
        tokens = { ...tokens, writer: own.tokens.writer! };
        const iterator = open(local.url, own.tokens.temp!, { ns: 'acme' });
        try {
          await ready(iterator, onLocal);
          const file = JSON.parse(readFileSync(own.path, 'utf8')) as { principals: { id: string }[] };
          file.principals = file.principals.filter((p) => p.id !== 'temp');
          writeFileSync(own.path, JSON.stringify(file, null, 2));
          const started = Date.now();
          let error: Result['errors'];
          for await (const result of iterator) {
            if (result.errors) {
              error = result.errors;
              break;
            }
          }
          expect(error?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
          expect(Date.now() - started).toBeLessThan(10_000);
        } finally {
          tokens = previous;
        }
      } finally {
        await local.close();
      }
    }, 30_000);
  }
});

describe('a slow subscriber', () => {
  let small: TestGateway;
  beforeAll(async () => {
    small = await startTestGateway({ MEMGATE_TOKENS_FILE: tokensPath, MEMGATE_SUBSCRIPTION_QUEUE: '5' });
  });
  afterAll(async () => {
    await small?.close();
  });

  for (const [name, open] of Object.entries(TRANSPORTS)) {
    it(`${name}: at most the queue's worth arrives, then LIMIT_EXCEEDED ends the subscription`, async () => {
      const iterator = open(small.url, tokens.w1!, { ns: 'acme' });
      await ready(iterator, small);
      const burst = Array.from({ length: 40 }, (_, i) => ({
        key: `${name}-burst-${i}`,
        kind: 'note',
        title: `b${i}`,
      }));
      await upsert(burst, small);
      const delivered: Change[] = [];
      let error: Result['errors'];
      for await (const result of iterator) {
        if (result.errors) {
          error = result.errors;
          break;
        }
        delivered.push(result.data!.memoryChanged);
      }
      const bursts = delivered.filter((c) => c.key.includes('-burst-'));
      // The reader can take one change off the queue before the burst fills it.
      expect(bursts.length).toBeLessThanOrEqual(6);
      expect(bursts.length).toBeGreaterThan(0);
      expect(error?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
      expect(error?.[0]?.message).toMatch(/dropped/);
    });
  }
});

describe('replicas', () => {
  it('every gateway sees every write (the change outbox, read by each process; PGlite in-process)', async () => {
    const native = Boolean(process.env.DATABASE_URL);
    expect(gw.db.backend).toBe(native ? 'postgres' : 'pglite');
    if (!native) {
      // One process owns an embedded database: its wake-ups are delivered in-process.
      expect(gw.db.listen).toBeDefined();
      const iterator = TRANSPORTS.sse(gw.url, tokens.w1!, { ns: 'acme' });
      await ready(iterator);
      await upsert([{ key: 'replica-local', kind: 'note' }]);
      expect((await until(iterator, 'replica-local')).at(-1)!.kind).toBe('ENTITY');
      await iterator.return?.();
      return;
    }
    const url = (gw.db as { url?: string }).url!;
    const listener = new pg.Client({ connectionString: url });
    const payloads: string[] = [];
    await listener.connect();
    listener.on('notification', (m) => payloads.push(m.payload ?? ''));
    await listener.query('LISTEN memgate_changes');
    const other = await startChildGateway(url);
    try {
      const onOther = TRANSPORTS.ws(other.url, tokens.w1!, { ns: 'acme' });
      const onThis = TRANSPORTS.sse(gw.url, tokens.w1!, { ns: 'acme' });
      await ready(onOther);
      await ready(onThis, other);
      await upsert([{ key: 'written-here', kind: 'note', title: 'topaz content' }]);
      expect((await until(onOther, 'written-here')).at(-1)!.entity!.title).toBe('topaz content');
      await upsert([{ key: 'written-there', kind: 'note', title: 'opal content' }], other);
      expect((await until(onThis, 'written-there')).at(-1)!.entity!.title).toBe('opal content');
      await onOther.return?.();
      await onThis.return?.();
      // A wake-up carries nothing; the outbox carries ids, never content.
      expect(payloads.length).toBeGreaterThan(0);
      expect(payloads.every((p) => p === '')).toBe(true);
      const { rows } = await listener.query<{ row: string }>(
        `SELECT row_to_json(o)::text AS row FROM change_outbox o WHERE namespace = 'acme'`,
      );
      expect(rows.some((r) => r.row.includes('written-here'))).toBe(true);
      expect(rows.some((r) => r.row.includes('topaz'))).toBe(false);
    } finally {
      await listener.end();
      other.stop();
    }
  }, 60_000);
});

async function startChildGateway(databaseUrl: string): Promise<{ url: string; stop(): void }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      MEMGATE_PORT: '0',
      MEMGATE_HOST: '127.0.0.1',
      MEMGATE_TOKENS_FILE: tokensPath,
      MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
      MEMGATE_LOG_LEVEL: 'info',
      MEMGATE_DATA_DIR: '.test-cache/data',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"([^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`second gateway exited (${code}): ${err}`)));
    setTimeout(() => reject(new Error(`second gateway did not start: ${out} ${err}`)), 30_000).unref();
  });
  return { url, stop: () => child.kill('SIGTERM') };
}
