import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/auth/principal.js';
import { pruneTraces } from '../../src/modules/retrieval/store/trace-store.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  TRACE_QUERY,
  allItems,
  compile,
  readTrace,
  recordObservations,
  retainDocuments,
} from '../helpers/seed-context.js';

const NS = 'traces';

const principals: Record<string, Principal> = {
  public: { id: 'public', read: ['*'], write: [], scopes: ['workspace:public'], pii: false, admin: false },
  both: {
    id: 'both',
    read: ['*'],
    write: [],
    scopes: ['workspace:public', 'workspace:secret'],
    pii: false,
    admin: false,
  },
  outsider: { id: 'outsider', read: ['elsewhere'], write: [], scopes: null, pii: false, admin: false },
};

describe('contextTrace: why an item was or was not in a pack', () => {
  let gw: TestGateway;
  const as = (name: string) => ({ headers: { 'x-test-principal': name } });

  beforeAll(async () => {
    gw = await startTestGateway(
      { MEMGATE_TRACE_RETENTION_DAYS: '30' },
      { authenticate: (req) => principals[req.headers.get('x-test-principal') ?? ''] ?? LOCAL_PRINCIPAL },
    );
    // Traces left by an earlier life of the database: one past retention, one within it.
    await gw.db.query(
      `INSERT INTO context_traces (namespace, trace_id, request, created_at) VALUES
         ($1, 'ctx-old', '{}'::jsonb, now() - interval '40 days'),
         ($1, 'ctx-recent', '{}'::jsonb, now() - interval '1 day'),
         ('elsewhere', 'ctx-old-elsewhere', '{}'::jsonb, now() - interval '40 days')`,
      [NS],
    );
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) =>
        `# Incident ${i}\nThe deploy failed on step ${i} because the runner ${i} lost its cache; ` +
        `the fix for incident ${i} was to rebuild the cache and rerun the pipeline.`,
    );
    await retainDocuments(gw, NS, [
      { key: 'doc:incidents', title: 'Incidents', content: paragraphs.join('\n\n') },
      {
        key: 'doc:secret',
        title: 'Secret incident',
        content: '# Secret\nThe deploy failed on step 99 in the secret workspace.',
        scopes: ['workspace:secret'],
      },
    ]);
    await recordObservations(gw, NS, [
      {
        source: { system: 'slack', externalId: 's1' },
        kind: 'message',
        occurredAt: '2024-05-01T10:00:00Z',
        content: 'The deploy failed again on step 3.',
        assertions: [{ fact: { subject: 'pipeline:main', predicate: 'status', object: 'state:failing' } }],
      },
    ]);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('prunes traces older than the retention on write, in the namespaces written only', async () => {
    await compile(gw, { namespaces: [NS], query: 'warm up' });
    const { rows } = await gw.db.query<{ id: string }>(
      `SELECT trace_id AS id FROM context_traces WHERE trace_id IN ('ctx-old', 'ctx-recent', 'ctx-old-elsewhere') ORDER BY trace_id`,
    );
    // Another namespace's old trace waits for a write there (one shard's work per write).
    expect(rows.map((r) => r.id)).toEqual(['ctx-old-elsewhere', 'ctx-recent']);
    expect(await readTrace(gw, NS, 'ctx-old')).toBeNull();
  });

  it('records one decision per candidate: INCLUDED items and OVER_BUDGET drops with their costs', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'deploy failed on step runner cache',
      anchors: ['pipeline:main'],
      ephemeralContext: { now: 'investigating' },
      budgetTokens: 300,
    });
    const included = allItems(pack).filter((i) => i.kind !== 'current');
    expect(included.length).toBeGreaterThan(0);
    expect(pack.budget.dropped.length).toBeGreaterThan(0);

    const trace = (await readTrace(gw, NS, pack.traceId))!;
    expect(trace.traceId).toBe(pack.traceId);
    expect(trace.kind).toBe('context');
    expect(Date.now() - Date.parse(trace.createdAt)).toBeLessThan(60_000);
    const ids = trace.decisions.map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);

    for (const item of included) {
      const d = trace.decisions.find((x) => x.id === item.id)!;
      expect(d).toMatchObject({
        decision: 'INCLUDED',
        tokenEstimate: item.tokenEstimate,
        conflict: item.conflict,
      });
      expect(d.score).toBeCloseTo(item.score, 12);
      expect(d.section).toBe(pack.sections.find((s) => s.items.some((i) => i.id === item.id))!.kind);
    }
    for (const drop of pack.budget.dropped) {
      const d = trace.decisions.find((x) => x.id === drop.id)!;
      expect(d).toMatchObject({
        decision: 'EXCLUDED',
        reason: 'OVER_BUDGET',
        tokenEstimate: drop.tokenEstimate,
      });
      expect(d.score).toBeGreaterThan(0);
    }
    const current = trace.decisions.find((d) => d.kind === 'current')!;
    expect(current).toMatchObject({ decision: 'INCLUDED', section: 'CURRENT', reason: null });

    for (const [name, ch] of Object.entries(trace.channels)) {
      expect(typeof ch.candidates, name).toBe('number');
      expect(typeof ch.weight, name).toBe('number');
      expect(typeof ch.ms, name).toBe('number');
      expect(ch.status, name).toBe('ok');
    }
    expect(trace.channels.lexical!.candidates).toBeGreaterThan(0);
    expect(trace.channels.facts!.candidates).toBe(1);

    // The request, without the ephemeral content: only its size.
    expect(trace.request).toMatchObject({
      namespaces: [NS],
      query: 'deploy failed on step runner cache',
      anchors: ['pipeline:main'],
      strategy: 'HYBRID',
      budgetTokens: 300,
      ephemeralContext: { present: true, chars: 'now: investigating'.length, tokens: 6 },
    });
    expect(JSON.stringify(trace.request)).not.toContain('investigating');
  });

  it('keeps one trace per namespace, each naming only its own items', async () => {
    await retainDocuments(gw, 'traces-b', [
      { key: 'doc:b', title: 'B', content: 'The deploy failed on step 7 in namespace b.' },
    ]);
    const pack = await compile(gw, { namespaces: [NS, 'traces-b'], query: 'deploy failed on step 7' });
    const a = (await readTrace(gw, NS, pack.traceId))!;
    const b = (await readTrace(gw, 'traces-b', pack.traceId))!;
    expect(a.decisions.length).toBeGreaterThan(0);
    expect(b.decisions.length).toBeGreaterThan(0);
    expect(a.decisions.every((d) => d.namespace === NS)).toBe(true);
    expect(b.decisions.every((d) => d.namespace === 'traces-b')).toBe(true);
    expect(a.channels).toEqual(b.channels);
  });

  it('answers null for an unknown id or another namespace, FORBIDDEN for an unreadable one', async () => {
    const pack = await compile(gw, { namespaces: [NS], query: 'deploy' });
    expect(await readTrace(gw, NS, 'ctx-000000000000000000000000')).toBeNull();
    expect(await readTrace(gw, 'traces-b', pack.traceId)).toBeNull();
    const res = await gw.gql(TRACE_QUERY, { ns: NS, id: pack.traceId }, as('outsider'));
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('shows a trace only to readers who may see every item it names', async () => {
    const pack = await compile(gw, { namespaces: [NS], query: 'deploy failed on step 99 secret workspace' });
    expect(allItems(pack).some((i) => i.text.includes('step 99'))).toBe(true);
    const hidden = await gw.gql<{ contextTrace: unknown }>(
      TRACE_QUERY,
      { ns: NS, id: pack.traceId },
      as('public'),
    );
    expect(hidden.errors).toBeUndefined();
    expect(hidden.data!.contextTrace).toBeNull();
    const shown = await gw.gql<{ contextTrace: { traceId: string } | null }>(
      TRACE_QUERY,
      { ns: NS, id: pack.traceId },
      as('both'),
    );
    expect(shown.data!.contextTrace?.traceId).toBe(pack.traceId);
    // A restricted principal's own pack names only what it may see: it can read its trace.
    const own = await gw.gql<{ context: { traceId: string } }>(
      'query($i: ContextInput!) { context(input: $i) { traceId } }',
      { i: { namespaces: [NS], query: 'deploy failed on step 99 secret workspace' } },
      as('public'),
    );
    const mine = await gw.gql<{ contextTrace: { decisions: { id: string }[] } | null }>(
      TRACE_QUERY,
      { ns: NS, id: own.data!.context.traceId },
      as('public'),
    );
    expect(mine.data!.contextTrace).not.toBeNull();
  });

  it('prunes on demand through the store', async () => {
    await gw.db.query(
      `INSERT INTO context_traces (namespace, trace_id, request, created_at)
       VALUES ($1, 'ctx-ancient', '{}'::jsonb, now() - interval '400 days')`,
      [NS],
    );
    expect(await pruneTraces(gw.db, 365)).toBe(1);
    expect(await pruneTraces(gw.db, 365)).toBe(0);
  });
});
