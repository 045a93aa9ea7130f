import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  type LiveChange,
  type LiveResult,
  type Transport,
  heapAfterGc,
  sleep,
  subscribe,
  untilListening,
} from '../helpers/live.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * Generated hostile use of live subscriptions through real SSE and WebSocket clients:
 * subscribers of four principals open and close at random, pause (slow consumers, with a
 * small queue so some overflow), while rows are written, re-written and moved out of reach
 * (an unscoped row given a scope) and facts link them. After every write the run waits until
 * each reading subscriber has caught up, so it knows the state every event was read in: each
 * event must carry its row exactly as it then was, and only a row its subscriber could then
 * read. After the run every subscription is closed, none is left open and the heap is back
 * within a fixed budget. Each run draws new cases (fast-check prints the seed of a failure).
 */
const NS = 'live-hostile';
const KEYS = ['k0', 'k1', 'k2', 'k3'] as const;
const SCOPES = [[], ['workspace:w1'], ['workspace:w2']] as const;
const PRINCIPALS = {
  w1: ['workspace:w1'],
  w2: ['workspace:w2'],
  unscoped: [],
  all: null,
} as const satisfies Record<string, readonly string[] | null>;
type PrincipalName = keyof typeof PRINCIPALS;

type Action =
  | { type: 'open'; principal: PrincipalName; transport: Transport }
  | { type: 'close'; pick: number }
  | { type: 'pause'; pick: number }
  | { type: 'entity'; key: (typeof KEYS)[number]; scopes: readonly string[] }
  | { type: 'fact'; subject: (typeof KEYS)[number]; object: (typeof KEYS)[number] };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    type: fc.constant('open' as const),
    principal: fc.constantFrom(...(Object.keys(PRINCIPALS) as PrincipalName[])),
    transport: fc.constantFrom<Transport>('sse', 'ws'),
  }),
  fc.record({ type: fc.constant('close' as const), pick: fc.nat() }),
  fc.record({ type: fc.constant('pause' as const), pick: fc.nat() }),
  {
    arbitrary: fc.record({
      type: fc.constant('entity' as const),
      key: fc.constantFrom(...KEYS),
      scopes: fc.constantFrom(...SCOPES),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      type: fc.constant('fact' as const),
      subject: fc.constantFrom(...KEYS),
      object: fc.constantFrom(...KEYS),
    }),
    weight: 2,
  },
);

/** A row as the test wrote it: its latest title and the union of every scope it was given. */
interface RowState {
  title: string;
  visibility: Set<string>;
}
type State = Map<string, RowState>;

function admits(principal: PrincipalName, row: RowState | undefined): boolean {
  if (!row) return false;
  const scopes = PRINCIPALS[principal];
  if (scopes === null || row.visibility.size === 0) return true;
  return scopes.some((s) => row.visibility.has(s));
}

interface Subscriber {
  principal: PrincipalName;
  iterator: AsyncIterableIterator<LiveResult>;
  /** The states since it last caught up: one of them is the one each event was read in. */
  window: State[];
  paused: boolean;
  ended: boolean;
  pending?: Promise<IteratorResult<LiveResult>>;
}

const clone = (state: State): State =>
  new Map([...state].map(([k, v]) => [k, { title: v.title, visibility: new Set(v.visibility) }]));

/** Whether `change` is its row as it was in `state`, and one `principal` could then read. */
function faithful(change: LiveChange, principal: PrincipalName, state: State): boolean {
  if (change.kind === 'ENTITY' && change.entity) {
    const row = state.get(change.key);
    return admits(principal, row) && row!.title === change.entity.title;
  }
  if (change.kind === 'FACT' && change.fact) {
    const [subject, object] = change.fact.predicate.split('__').slice(1);
    const objectRow = state.get(object!);
    return (
      admits(principal, state.get(subject!)) &&
      admits(principal, objectRow) &&
      change.fact.object?.title === objectRow!.title
    );
  }
  return false;
}

let gw: TestGateway;
let tokens: Record<string, string>;

beforeAll(async () => {
  const written = writeTokensFile([
    { id: 'writer', read: [NS], write: [NS], scopes: ['*'] },
    { id: 'w1', read: [NS], scopes: ['workspace:w1'] },
    { id: 'w2', read: [NS], scopes: ['workspace:w2'] },
    { id: 'unscoped', read: [NS] },
    { id: 'all', read: [NS], scopes: ['*'] },
  ]);
  tokens = written.tokens;
  gw = await startTestGateway({
    MEMGATE_TOKENS_FILE: written.path,
    MEMGATE_SUBSCRIPTION_QUEUE: '12',
    MEMGATE_TRACE_SQL: '0',
  });
});
afterAll(async () => {
  await gw?.close();
});

async function mutate(query: string, variables: Record<string, unknown>): Promise<void> {
  const res = await gw.gql(query, variables, { token: tokens.writer });
  expect(res.errors).toBeUndefined();
}

const upsert = (entities: unknown[]) =>
  mutate(`mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { accepted } }`, {
    e: entities,
  });

let step = 0;
let caseNo = 0;

/** Reads `s` until the tick written last; every event must be faithful to a state of its window. */
async function catchUp(s: Subscriber, tick: string, violations: string[]): Promise<void> {
  while (!s.ended) {
    s.pending ??= s.iterator.next();
    const next = await Promise.race([s.pending, sleep(15_000).then(() => null)]);
    if (next === null) throw new Error(`a ${s.principal} subscriber stalled before ${tick}`);
    s.pending = undefined;
    if (next.done || next.value.errors) {
      // A paused subscriber may fall behind its small queue; nothing else may end a stream.
      const code = next.value?.errors?.[0]?.extensions?.code;
      if (!next.done && code !== 'LIMIT_EXCEEDED') violations.push(`stream ended with ${String(code)}`);
      s.ended = true;
      return;
    }
    const change = next.value.data!.memoryChanged;
    if (change.key === tick) break;
    if (change.key === 'ping' || change.key.startsWith('tick-')) continue;
    if (!s.window.some((state) => faithful(change, s.principal, state))) {
      violations.push(`${s.principal} got ${JSON.stringify(change)}`);
    }
  }
  s.window = s.window.slice(-1);
}

async function run(actions: Action[], subscribers: Subscriber[], violations: string[]): Promise<void> {
  const state: State = new Map();
  const live = () => subscribers.filter((s) => !s.ended);
  for (const a of actions) {
    step += 1;
    if (a.type === 'open' && live().length < 6) {
      const iterator = subscribe(a.transport, gw.url, tokens[a.principal]!, { ns: NS });
      const first = await untilListening(iterator, (n) =>
        upsert([{ key: 'ping', kind: 'probe', title: `ping ${step}-${n}` }]),
      );
      if (first.errors) violations.push(`could not subscribe: ${JSON.stringify(first.errors)}`);
      subscribers.push({
        principal: a.principal,
        iterator,
        window: [clone(state)],
        paused: false,
        ended: false,
      });
      continue;
    }
    if (a.type === 'close' || a.type === 'pause') {
      const target = live()[a.pick % Math.max(1, live().length)];
      if (!target) continue;
      if (a.type === 'close') {
        target.ended = true;
        await target.iterator.return?.();
      } else target.paused = !target.paused;
      continue;
    }
    if (a.type === 'entity') {
      const key = `c${caseNo}-${a.key}`;
      const title = `${key}@${step}`;
      await upsert([{ key, kind: 'note', title, scopes: a.scopes }]);
      const row = state.get(key) ?? { title, visibility: new Set<string>() };
      row.title = title;
      for (const s of a.scopes) row.visibility.add(s);
      state.set(key, row);
    } else if (a.type === 'fact') {
      const [subject, object] = [`c${caseNo}-${a.subject}`, `c${caseNo}-${a.object}`];
      if (!state.has(subject) || !state.has(object)) continue;
      await mutate(
        `mutation($f: [FactInput!]!) { assertFacts(namespace: "${NS}", facts: $f) { accepted } }`,
        { f: [{ subject, predicate: `p${step}__${subject}__${object}`, object }] },
      );
    }
    const tick = `tick-${step}`;
    await upsert([{ key: tick, kind: 'probe', title: tick }]);
    for (const s of live()) s.window.push(clone(state));
    for (const s of live().filter((x) => !x.paused)) await catchUp(s, tick, violations);
  }
}

describe('generated subscriptions: churn, visibility flips, slow consumers', () => {
  it('every event is its row as it was, readable by its subscriber; nothing is held after close', async () => {
    const violations: string[] = [];
    const baseline = await heapAfterGc();
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 10, maxLength: 24 }), async (actions) => {
        const subscribers: Subscriber[] = [];
        // Fresh rows per case (a scope, once given, is never taken back).
        caseNo += 1;
        try {
          await run(
            [{ type: 'open', principal: 'w1', transport: 'sse' }, ...actions],
            subscribers,
            violations,
          );
        } finally {
          for (const s of subscribers) await s.iterator.return?.();
        }
        expect(violations).toEqual([]);
      }),
      { numRuns: 6, endOnFailure: true },
    );
    for (let i = 0; i < 50 && gw.app.deps.changes!.active > 0; i++) await sleep(100);
    expect(gw.app.deps.changes!.active).toBe(0);
    expect((await heapAfterGc()) - baseline).toBeLessThan(8);
  }, 600_000);
});
