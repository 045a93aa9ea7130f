import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { SERVICES_PACK } from './domain-pack-fixture.js';

const TYPED = /* GraphQL */ `
  query Typed($input: TypedContextInput!) {
    typedContext(input: $input) {
      anchors
      unresolved
      sections
      facts { factId predicate validFrom validTo status subject { key } object { key } }
      sources { namespace key title sourcePath }
      used
      warnings
      traceId
    }
  }
`;

interface Match {
  namespace: string;
  key: string;
  kind: string;
  resolvedBy: string;
  evidence: string;
  detail: Record<string, unknown> | null;
}
interface TypedEntity {
  key: string;
  kind: string;
  title: string;
  attributes: Record<string, unknown> | null;
  stale: boolean;
  anchor: boolean;
  step: number;
  depth: number;
}
interface Typed {
  anchors: { kind: string; value: string; resolved: boolean; resolvedBy: string | null; matches: Match[] }[];
  unresolved: string[];
  sections: { kind: string; entities: TypedEntity[] }[];
  facts: {
    factId: string;
    predicate: string;
    validFrom: string;
    validTo: string | null;
    subject: { key: string };
    object: { key: string };
  }[];
  sources: { key: string }[];
  used: { entities: string[]; facts: string[]; snapshots: string[] };
  warnings: string[];
  traceId: string;
}

const NS = 'typed';
const T1 = '2026-03-01T00:00:00.000Z';
const T2 = '2026-04-01T00:00:00.000Z';
const BEFORE_CLOSE = '2026-03-15T00:00:00.000Z';
const AFTER_CLOSE = '2026-04-15T00:00:00.000Z';

const ep = (method: string, path: string, attributes: Record<string, unknown> = {}) => ({
  key: `endpoint:payments:${method} ${path}`,
  kind: 'endpoint',
  attributes: { method, path, ...attributes },
});
const exposes = (method: string, path: string) => ({
  subject: 'service:payments',
  relation: 'exposes',
  object: `endpoint:payments:${method} ${path}`,
});

describe('typedContext over HTTP', () => {
  let gw: TestGateway;
  const run = async (input: Record<string, unknown>) => {
    const res = await gw.gql<{ typedContext: Typed }>(TYPED, { input: { namespaces: [NS], ...input } });
    expect(res.errors).toBeUndefined();
    return res.data!.typedContext;
  };
  const keysOf = (t: Typed) => t.sections.flatMap((s) => s.entities.map((e) => e.key));

  beforeAll(async () => {
    gw = await startTestGateway();
    const ok = (res: { errors?: unknown }) => expect(res.errors).toBeUndefined();
    ok(await gw.gql(`mutation($p: JSON!) { registerDomainPack(pack: $p) }`, { p: SERVICES_PACK }));
    ok(
      await gw.gql(
        `mutation { configureNamespace(namespace: "${NS}", packs: ["services@1.0.0"], strict: false) }`,
      ),
    );
    const reconcile = `mutation($s: SnapshotInput!) { reconcileSnapshot(namespace: "${NS}", snapshot: $s) { closedRelations } }`;
    ok(
      await gw.gql(reconcile, {
        s: {
          snapshotId: 'c1',
          scope: 'service:payments',
          observedAt: T1,
          entities: [
            { key: 'service:payments', kind: 'service', title: 'Payments', attributes: { tier: 'gold' } },
            ep('GET', '/runs', { operationId: 'listRuns' }),
            ep('POST', '/runs'),
            ep('GET', '/legacy'),
          ],
          relations: [exposes('GET', '/runs'), exposes('POST', '/runs'), exposes('GET', '/legacy')],
        },
      }),
    );
    ok(
      await gw.gql(reconcile, {
        s: {
          snapshotId: 'c2',
          scope: 'service:payments',
          observedAt: T2,
          entities: [
            { key: 'service:payments', kind: 'service', title: 'Payments', attributes: { tier: 'silver' } },
            ep('GET', '/runs', { operationId: 'listRuns' }),
            ep('POST', '/runs'),
          ],
          relations: [exposes('GET', '/runs'), exposes('POST', '/runs')],
        },
      }),
    );
    ok(
      await gw.gql(
        `mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { rejected } }`,
        {
          e: [
            { key: 'service:billing', kind: 'service', title: 'Billing', validFrom: T1 },
            { key: 'ticket:PAY-123', kind: 'ticket', title: 'Runs endpoint 500s', validFrom: T1 },
            ...['a', 'b', 'c', 'd', 'e'].map((x) => ({
              key: `service:${x}`,
              kind: 'service',
              validFrom: T1,
            })),
          ],
        },
      ),
    );
    ok(
      await gw.gql(
        `mutation($f: [FactInput!]!) { assertFacts(namespace: "${NS}", facts: $f) { rejected } }`,
        {
          f: [
            {
              subject: 'service:billing',
              predicate: 'calls',
              object: 'endpoint:payments:GET /runs',
              validFrom: T1,
            },
            { subject: 'ticket:PAY-123', predicate: 'mentions', object: 'service:payments', validFrom: T1 },
            { subject: 'service:a', predicate: 'depends_on', object: 'service:b', validFrom: T1 },
            { subject: 'service:b', predicate: 'depends_on', object: 'service:c', validFrom: T1 },
            { subject: 'service:c', predicate: 'depends_on', object: 'service:d', validFrom: T1 },
            { subject: 'service:a', predicate: 'depends_on', object: 'service:e', validFrom: T1 },
          ],
        },
      ),
    );
    ok(
      await gw.gql(
        `mutation($d: [DocumentInput!]!) { retainDocuments(namespace: "${NS}", documents: $d) { rejected } }`,
        {
          d: [
            {
              key: 'service:search',
              kind: 'service',
              title: 'Search service',
              content: 'The search service indexes the product catalogue for full text queries and facets.',
              sourcePath: 'docs/search.md',
            },
          ],
        },
      ),
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('resolves anchors by exact key, pack alias and id pattern, and lists the unresolved', async () => {
    const t = await run({
      anchors: [
        { kind: 'service', value: 'service:payments' },
        { kind: 'service', value: 'billing' },
        { kind: 'endpoint', value: 'GET /runs' },
        { kind: 'endpoint', value: 'listRuns' },
        { kind: 'ticket', value: 'Investigate PAY-123 before the release' },
        { kind: 'endpoint', value: 'clients see 500s on POST /runs since Monday' },
        { kind: 'svc', value: 'payments' },
        { kind: 'service', value: 'catalogue full text search' },
        { kind: 'team', value: 'team:nobody' },
      ],
      traverse: [],
      asOf: AFTER_CLOSE,
    });
    const summary = t.anchors.map((a) => [a.resolvedBy, a.matches.map((m) => m.key)]);
    expect(summary).toEqual([
      ['exact', ['service:payments']],
      ['alias', ['service:billing']],
      ['alias', ['endpoint:payments:GET /runs']],
      ['alias', ['endpoint:payments:GET /runs']],
      ['pattern', ['ticket:PAY-123']],
      ['pattern', ['endpoint:payments:POST /runs']],
      ['alias', ['service:payments']],
      [null, []],
      [null, []],
    ]);
    expect(t.anchors[1]!.matches[0]).toMatchObject({ evidence: 'ASSERTED', detail: { alias: '{name}' } });
    expect(t.anchors[3]!.matches[0]!.detail).toEqual({ alias: '{operationId}' });
    expect(t.anchors[4]!.matches[0]!.detail).toMatchObject({
      extracted: 'PAY-123',
      naturalKey: 'ticket:PAY-123',
    });
    expect(t.unresolved).toEqual(['service:catalogue full text search', 'team:team:nobody']);
    // Anchors are entities of the answer, at depth 0.
    expect(t.sections.map((s) => s.kind)).toEqual(['endpoint', 'service', 'ticket']);
  });

  it('resolves by vector search only when allowed, marked INFERRED', async () => {
    const anchors = [{ kind: 'service', value: 'catalogue full text search' }];
    const off = await run({ anchors, traverse: [] });
    expect(off.unresolved).toEqual(['service:catalogue full text search']);
    const on = await run({ anchors, traverse: [], allowSemantic: true });
    expect(on.unresolved).toEqual([]);
    expect(on.anchors[0]).toMatchObject({ resolved: true, resolvedBy: 'semantic' });
    expect(on.anchors[0]!.matches[0]).toMatchObject({ key: 'service:search', evidence: 'INFERRED' });
    expect(on.anchors[0]!.matches[0]!.detail!.score).toBeGreaterThan(0.3);
    expect(on.sources).toEqual([
      { namespace: NS, key: 'service:search', title: 'Search service', sourcePath: 'docs/search.md' },
    ]);
    // A kind with no such entity stays unresolved even with semantic search.
    const none = await run({
      anchors: [{ kind: 'ticket', value: 'catalogue full text search' }],
      traverse: [],
      allowSemantic: true,
    });
    expect(none.unresolved).toEqual(['ticket:catalogue full text search']);
  });

  it('walks only the facts valid at asOf, with the attributes in force then', async () => {
    const input = {
      anchors: [{ kind: 'service', value: 'service:payments' }],
      traverse: [{ relation: 'exposes', direction: 'OUT', depth: 1, limit: 50 }],
    };
    const before = await run({ ...input, asOf: BEFORE_CLOSE });
    const after = await run({ ...input, asOf: AFTER_CLOSE });
    expect(keysOf(before)).toEqual([
      'endpoint:payments:GET /legacy',
      'endpoint:payments:GET /runs',
      'endpoint:payments:POST /runs',
      'service:payments',
    ]);
    expect(keysOf(after)).toEqual([
      'endpoint:payments:GET /runs',
      'endpoint:payments:POST /runs',
      'service:payments',
    ]);
    expect(before.facts.map((f) => f.object.key)).toEqual([
      'endpoint:payments:GET /legacy',
      'endpoint:payments:GET /runs',
      'endpoint:payments:POST /runs',
    ]);
    const legacy = before.facts.find((f) => f.object.key.endsWith('/legacy'))!;
    expect(legacy.validTo).toBe(T2);
    expect(after.facts.some((f) => f.factId === legacy.factId)).toBe(false);
    const service = (t: Typed) => t.sections.find((s) => s.kind === 'service')!.entities[0]!;
    expect(service(before)).toMatchObject({
      key: 'service:payments',
      anchor: true,
      depth: 0,
      attributes: { tier: 'gold' },
    });
    expect(service(after).attributes).toEqual({ tier: 'silver' });
    expect(before.sections.find((s) => s.kind === 'endpoint')!.entities[0]).toMatchObject({
      key: 'endpoint:payments:GET /legacy',
      stale: true,
      step: 1,
      depth: 1,
    });
    // Before anything was known, nothing is walked and no attribute version is in force.
    const early = await run({ ...input, asOf: '2026-01-01T00:00:00Z' });
    expect(keysOf(early)).toEqual(['service:payments']);
    expect(service(early).attributes).toBeNull();
    expect(after.used.snapshots).toEqual([`${NS}:service:payments#c2`]);
  });

  it('chains steps from the previous step, in either direction', async () => {
    const t = await run({
      anchors: [{ kind: 'service', value: 'payments' }],
      traverse: [
        { relation: 'exposes', direction: 'OUT' },
        { relation: 'calls', direction: 'IN', from: 'previous' },
        { relation: 'mentions', direction: 'IN', from: 'anchors' },
      ],
      asOf: AFTER_CLOSE,
    });
    const reached = t.sections.flatMap((s) => s.entities.map((e) => [e.key, e.step, e.depth]));
    expect(reached).toEqual([
      ['endpoint:payments:GET /runs', 1, 1],
      ['endpoint:payments:POST /runs', 1, 1],
      ['service:billing', 2, 1],
      ['service:payments', 0, 0],
      ['ticket:PAY-123', 3, 1],
    ]);
    expect(t.facts.map((f) => f.predicate)).toEqual(['exposes', 'exposes', 'calls', 'mentions']);
    const both = await run({
      anchors: [{ kind: 'service', value: 'service:b' }],
      traverse: [{ relation: 'depends_on', direction: 'BOTH' }],
      asOf: AFTER_CLOSE,
    });
    expect(keysOf(both)).toEqual(['service:a', 'service:b', 'service:c']);
  });

  it('depth walks breadth levels; limit caps the new entities of a step, in key order', async () => {
    const walk = (depth: number, limit = 50) =>
      run({
        anchors: [{ kind: 'service', value: 'service:a' }],
        traverse: [{ relation: 'depends_on', depth, limit }],
        asOf: AFTER_CLOSE,
      });
    expect(keysOf(await walk(1))).toEqual(['service:a', 'service:b', 'service:e']);
    expect(keysOf(await walk(2))).toEqual(['service:a', 'service:b', 'service:c', 'service:e']);
    const three = await walk(3);
    expect(keysOf(three)).toEqual(['service:a', 'service:b', 'service:c', 'service:d', 'service:e']);
    expect(three.sections[0]!.entities.map((e) => e.depth)).toEqual([0, 1, 2, 3, 1]);
    expect(keysOf(await walk(3, 1))).toEqual(['service:a', 'service:b']);
    expect(keysOf(await walk(3, 3))).toEqual(['service:a', 'service:b', 'service:c', 'service:e']);
  });

  it('is deterministic: the same input gives the same JSON, trace id included, and the trace is stored', async () => {
    const input = {
      anchors: [
        { kind: 'service', value: 'payments' },
        { kind: 'ticket', value: 'see PAY-123' },
        { kind: 'service', value: 'nope' },
      ],
      traverse: [
        { relation: 'exposes', direction: 'BOTH', depth: 2 },
        { relation: 'calls', direction: 'IN', from: 'previous' },
      ],
      asOf: BEFORE_CLOSE,
    };
    const a = await gw.gql(TYPED, { input: { namespaces: [NS], ...input } });
    const b = await gw.gql(TYPED, { input: { namespaces: [NS], ...input } });
    expect(a.errors).toBeUndefined();
    expect(JSON.stringify(b.data)).toBe(JSON.stringify(a.data));
    const traceId = (a.data as { typedContext: Typed }).typedContext.traceId;
    expect(traceId).toMatch(/^typed-[0-9a-f]{24}$/);
    const stored = await gw.db.query<{ kind: string; request: { asOf: string }; decisions: unknown[] }>(
      `SELECT kind, request, decisions FROM context_traces WHERE namespace = $1 AND trace_id = $2`,
      [NS, traceId],
    );
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0]!.kind).toBe('typed');
    expect(stored.rows[0]!.request.asOf).toBe(BEFORE_CLOSE);
    expect(stored.rows[0]!.decisions.length).toBeGreaterThan(0);
    const other = await run({ ...input, asOf: AFTER_CLOSE });
    expect(other.traceId).not.toBe(traceId);
  });

  it('validates steps', async () => {
    const bad = async (traverse: unknown[]) => {
      const res = await gw.gql(TYPED, { input: { namespaces: [NS], anchors: [], traverse } });
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      return res.errors![0]!.message;
    };
    expect(await bad([{ relation: 'exposes', depth: 6 }])).toMatch(/depth must be between 1 and 5/);
    expect(await bad([{ relation: 'exposes', limit: 201 }])).toMatch(/limit must be between 1 and 200/);
    expect(await bad([{ relation: 'exposes', from: 'elsewhere' }])).toMatch(
      /from is "anchors" or "previous"/,
    );
    expect(await bad([{ relation: 'exposes', from: 'previous' }])).toMatch(
      /first step cannot start from "previous"/,
    );
  });
});
