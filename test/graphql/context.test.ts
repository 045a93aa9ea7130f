import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/auth/principal.js';
import { compileContext } from '../../src/modules/retrieval/compiler/compile.js';
import { estimateTokens } from '../../src/domain/tokens.js';
import { CONTEXT_BANNER } from '../../src/domain/untrusted-text.js';
import { parseGlobalId } from '../../src/global-id.js';
import { createHashingEmbedder } from '../../src/providers/hashing-embedder.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { sumOfSignals } from '../helpers/score-signals.js';
import {
  CONTEXT_QUERY,
  CONTEXT_WITH_PROVENANCE,
  type Pack,
  type PackItem,
  allItems,
  assertFacts,
  compile,
  readTrace,
  recordObservations,
  redactObservation,
  retainDocuments,
  section,
  servedFacts,
  supersedeFact,
  tablesContaining,
} from '../helpers/seed-context.js';

const NS = 'ctx';
const SECTION_ORDER = [
  'CURRENT',
  'CURRENT_STATE',
  'RELEVANT_FACTS',
  'EPISODES',
  'DOCUMENTS',
  'RELATED_ENTITIES',
  'RECENT_OBSERVATIONS',
];

const principals: Record<string, Principal> = {
  restricted: {
    id: 'restricted',
    read: ['*'],
    write: [],
    scopes: ['workspace:public'],
    pii: false,
    admin: false,
  },
  outsider: { id: 'outsider', read: ['elsewhere'], write: [], scopes: null, pii: true, admin: false },
};

function channelsOf(pack: Pack): Set<string> {
  return new Set(allItems(pack).flatMap((i) => i.signals.channels.map((c) => c.channel)));
}

function expectWellFormed(pack: Pack, budget: number) {
  expect(pack.tokenEstimate).toBeLessThanOrEqual(budget);
  expect(estimateTokens(pack.text, 3)).toBeLessThanOrEqual(budget);
  expect(pack.budget.maxTokens).toBe(budget);
  expect(pack.budget.used).toBeLessThanOrEqual(budget);
  // What the budget says was used is what the text costs.
  expect(pack.budget.used).toBe(pack.tokenEstimate);
  const kinds = pack.sections.map((s) => s.kind);
  expect(kinds).toEqual(SECTION_ORDER.filter((k) => kinds.includes(k)));
  for (const s of pack.sections) expect(s.items.length).toBeGreaterThan(0);
  for (const item of allItems(pack)) {
    if (item.kind === 'current') continue;
    const r = item.signals;
    expect(item.score).toBeCloseTo(sumOfSignals(r), 12);
    expect(item.tokenEstimate).toBeGreaterThan(0);
    expect(parseGlobalId(item.id)?.typename).toMatch(/^(Fact|Chunk|Observation|Entity)$/);
  }
  // Items within a section come by score.
  for (const s of pack.sections) {
    const scores = s.items.map((i) => i.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  }
}

describe('context: the ContextPack over HTTP', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway(
      {},
      { authenticate: (req) => principals[req.headers.get('x-test-principal') ?? ''] ?? LOCAL_PRINCIPAL },
    );
    await retainDocuments(gw, NS, [
      {
        key: 'doc:runbook',
        title: 'Deploy runbook',
        content:
          '# Deploy failures\nWhen the deploy fails on step 3 with error E4021, restart the build runner and retry.',
        sourcePath: 'runbooks/deploy.md',
      },
      {
        key: 'doc:guest-pass',
        title: 'Guest pass',
        content: '# Guest pass\nVisitors get a guest pass at the front desk after showing an ID.',
      },
      {
        key: 'doc:secret',
        title: 'Secret plan',
        content: '# Secret\nThe deploy of the secret project happens on step 3 at midnight.',
        scopes: ['workspace:secret'],
      },
    ]);
    await recordObservations(gw, NS, [
      {
        source: { system: 'slack', stream: 'ops', externalId: 'm1' },
        kind: 'message',
        occurredAt: '2024-05-01T10:00:00Z',
        content: 'Alice says the deploy failed on step 3 again, contact alice@example.com.',
        scopes: ['project:apollo'],
        assertions: [
          {
            entity: { key: 'person:alice', kind: 'person', title: 'Alice', attributes: { role: 'engineer' } },
          },
          { entity: { key: 'project:apollo', kind: 'project', title: 'Apollo' } },
          { fact: { subject: 'person:alice', predicate: 'works_on', object: 'project:apollo' } },
          { episode: { text: 'Alice investigated the failing deploy of Apollo on step 3 with Marguerite.' } },
        ],
      },
      {
        source: { system: 'tracker', externalId: 't9' },
        kind: 'ticket',
        occurredAt: '2024-05-02T09:00:00Z',
        data: { ticket: 'OPS-9', status: 'open' },
        scopes: ['project:zeus'],
      },
    ]);
    await assertFacts(gw, NS, [
      {
        subject: 'project:apollo',
        predicate: 'runs_on',
        object: 'cluster:k8s-east',
        scopes: ['project:apollo'],
      },
    ]);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('a HYBRID context costs at most 11 SQL statements: six channels, the current state of the entities the query names, the hits read back (on native PostgreSQL while the anchored channels run; on PGlite, one statement at a time, with the anchored candidates), the anchored candidates read back, multi-hop (its hits read back in it), the trace', async () => {
    const res = await gw.gql<{ context: Pack }>(CONTEXT_QUERY, {
      input: { namespaces: [NS], query: 'deploy fails with E4021 on step 3', strategy: 'HYBRID' },
    });
    expect(res.errors).toBeUndefined();
    const trace = (await readTrace(gw, NS, res.data!.context.traceId))!;
    // Every channel ran, multi-hop included: the count below is the worst case of the path.
    for (const channel of [
      'vector',
      'lexical',
      'exact',
      'facts',
      'graph',
      'recent',
      'multi_hop',
      'current_state',
    ])
      expect(trace.channels[channel], channel).toMatchObject({ status: 'ok' });
    expect(res.extensions!.sql!.statements).toBeLessThanOrEqual(10);
  });

  describe('strategies', () => {
    it('HYBRID uses every channel and fills every kind of section, each item explained', async () => {
      const pack = await compile(gw, {
        namespaces: [NS],
        query: 'deploy failed on step 3 E4021',
        anchors: ['person:alice'],
        ephemeralContext: { task: 'continue the deploy investigation' },
      });
      expectWellFormed(pack, 8000);
      expect(pack.text.startsWith(CONTEXT_BANNER)).toBe(true);
      expect(pack.sections.map((s) => s.kind)).toEqual([
        'CURRENT',
        'RELEVANT_FACTS',
        'EPISODES',
        'DOCUMENTS',
        'RELATED_ENTITIES',
        'RECENT_OBSERVATIONS',
      ]);
      expect(section(pack, 'CURRENT')[0]!.text).toBe('task: continue the deploy investigation');
      expect(servedFacts(pack).map((i) => i.text)).toContain(
        'Alice works_on Apollo (valid 2024-05-01T10:00Z → now)',
      );
      const runbook = section(pack, 'DOCUMENTS').find((i) => i.text.includes('E4021'))!;
      expect(runbook).toMatchObject({
        title: 'Deploy runbook — Deploy failures',
        sourcePath: 'runbooks/deploy.md',
      });
      expect(runbook.signals.exactId).toBe(0.01);
      expect(runbook.signals.channels.map((c) => c.channel).sort()).toEqual(['exact', 'lexical', 'vector']);
      const channels = channelsOf(pack);
      for (const c of ['vector', 'lexical', 'exact', 'facts', 'graph', 'recent'])
        expect(channels).toContain(c);
      expect(pack.sources.map((s) => s.key)).toContain('doc:runbook');
      const trace = (await readTrace(gw, NS, pack.traceId))!;
      expect(Object.keys(trace.channels).sort()).toEqual(
        expect.arrayContaining(['exact', 'facts', 'graph', 'lexical', 'recent', 'vector']),
      );
      for (const c of ['exact', 'facts', 'graph', 'lexical', 'recent', 'vector']) {
        expect(trace.channels[c]).toMatchObject({ status: 'ok' });
        expect(trace.channels[c]!.candidates).toBeGreaterThan(0);
        expect(trace.channels[c]!.ms).toBeGreaterThanOrEqual(0);
      }
      expect(trace.channels.graph!.weight).toBe(0.7);
      // With a query, recency breaks ties instead of competing with relevance.
      expect(trace.channels.recent!.weight).toBe(0.002);
      expect(trace.channels.facts!.weight).toBe(1);
      expect(trace.channels.lexical!.weight).toBe(1);
    });

    it('SEMANTIC uses only the vector channel', async () => {
      const pack = await compile(gw, { namespaces: [NS], query: 'deploy failures', strategy: 'SEMANTIC' });
      expectWellFormed(pack, 8000);
      expect(allItems(pack).length).toBeGreaterThan(0);
      // Multi-hop expansion is the only extra pass a strategy may get.
      expect(channelsOf(pack)).toContain('vector');
      for (const c of channelsOf(pack)) expect(['vector', 'multi_hop']).toContain(c);
      const trace = (await readTrace(gw, NS, pack.traceId))!;
      expect(Object.keys(trace.channels)).toEqual(expect.arrayContaining(['vector']));
      expect(Object.keys(trace.channels)).not.toContain('lexical');
    });

    it('EXACT uses lexical and exact identifiers; the identifier earns its bonus', async () => {
      const pack = await compile(gw, { namespaces: [NS], query: 'E4021', strategy: 'EXACT' });
      expectWellFormed(pack, 8000);
      for (const c of channelsOf(pack)) expect(['lexical', 'exact', 'multi_hop']).toContain(c);
      const top = allItems(pack)[0]!;
      expect(top.text).toContain('E4021');
      expect(top.signals.exactId).toBe(0.01);
    });

    it('GRAPH uses graph and facts around the anchors, without a query', async () => {
      const pack = await compile(gw, { namespaces: [NS], anchors: ['project:apollo'], strategy: 'GRAPH' });
      expectWellFormed(pack, 8000);
      for (const c of channelsOf(pack)) expect(['graph', 'facts', 'multi_hop']).toContain(c);
      const facts = servedFacts(pack).map((i) => i.text);
      expect(facts).toContain('Alice works_on Apollo (valid 2024-05-01T10:00Z → now)');
      expect(facts.some((t) => t.startsWith('Apollo runs_on cluster:k8s-east'))).toBe(true);
      expect(section(pack, 'RELATED_ENTITIES').map((i) => i.title)).toEqual(
        expect.arrayContaining(['Apollo', 'Alice']),
      );
    });

    it('BRIEFING is standing context: graph, facts and recent, the query is not used', async () => {
      const pack = await compile(gw, {
        namespaces: [NS],
        query: 'guest pass',
        anchors: ['person:alice'],
        strategy: 'BRIEFING',
      });
      expectWellFormed(pack, 8000);
      for (const c of channelsOf(pack)) expect(['graph', 'facts', 'recent', 'multi_hop']).toContain(c);
      expect(allItems(pack).some((i) => i.text.includes('Guest pass') || i.text.includes('guest pass'))).toBe(
        false,
      );
      expect(section(pack, 'RECENT_OBSERVATIONS').length).toBeGreaterThan(0);
      expect(section(pack, 'RELATED_ENTITIES')[0]!.title).toBe('Alice');
    });

    it('a subject anchors the pack like an anchor (type:id)', async () => {
      const pack = await compile(gw, {
        namespaces: [NS],
        subject: { type: 'person', id: 'alice' },
        strategy: 'GRAPH',
      });
      expect(servedFacts(pack).map((i) => i.text)).toContain(
        'Alice works_on Apollo (valid 2024-05-01T10:00Z → now)',
      );
      expect(section(pack, 'RELATED_ENTITIES')[0]!.title).toBe('Alice');
    });

    it('per-request weights override the strategy’s', async () => {
      const pack = await compile(gw, {
        namespaces: [NS],
        query: 'deploy failed on step 3',
        anchors: ['person:alice'],
        weights: { recent: 0, graph: 2 },
      });
      const trace = (await readTrace(gw, NS, pack.traceId))!;
      expect(trace.channels.recent!.weight).toBe(0);
      expect(trace.channels.graph!.weight).toBe(2);
      const onlyRecent = allItems(pack).filter(
        (i) => i.signals.channels.length > 0 && i.signals.channels.every((c) => c.channel === 'recent'),
      );
      for (const item of onlyRecent) expect(item.signals.rrf).toBe(0);
    });

    it('an empty query with HYBRID still serves anchors and recent memory', async () => {
      const pack = await compile(gw, { namespaces: [NS], anchors: ['person:alice'] });
      expectWellFormed(pack, 8000);
      expect(channelsOf(pack).has('vector')).toBe(false);
      expect(servedFacts(pack).length).toBeGreaterThan(0);
    });
  });

  describe('inputs', () => {
    // A selection without lists: the cost limit (which reads `k` as a list size) stays out of the way.
    const bad = async (input: Record<string, unknown>) => {
      const res = await gw.gql('query($input: ContextInput!) { context(input: $input) { traceId } }', {
        input: { namespaces: [NS], query: 'deploy', ...input },
      });
      expect(res.data ?? null).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      return res.errors![0]!.message;
    };

    it('defaults the budget to 8000 tokens', async () => {
      const pack = await compile(gw, { namespaces: [NS], query: 'deploy' });
      expect(pack.budget.maxTokens).toBe(8000);
    });

    it('refuses a budget that is not a positive integer, with a code', async () => {
      expect(await bad({ budgetTokens: 0 })).toMatch(/budgetTokens/);
      expect(await bad({ budgetTokens: -5 })).toMatch(/budgetTokens/);
      expect(await bad({ budgetTokens: null })).toMatch(/budgetTokens/);
      await bad({ budgetTokens: 1.5 });
      await bad({ budgetTokens: 'many' });
    });

    it('bounds scopes, k, maxDistance, namespaces and anchors', async () => {
      expect(await bad({ scopes: Array.from({ length: 11 }, (_, i) => `project:p${i}`) })).toMatch(/scopes/);
      expect(await bad({ scopes: ['not a scope'] })).toMatch(/scope/);
      expect(await bad({ k: 0 })).toMatch(/k must be/);
      expect(await bad({ k: 65 })).toMatch(/k must be/);
      expect(await bad({ maxDistance: 0 })).toMatch(/maxDistance/);
      expect(await bad({ maxDistance: 2.5 })).toMatch(/maxDistance/);
      expect(await bad({ namespaces: [] })).toMatch(/namespace/);
      expect(await bad({ anchors: Array.from({ length: 21 }, (_, i) => `a${i}`) })).toMatch(/anchors/);
      expect(await bad({ strategy: 'WHATEVER' })).toBeTruthy();
      const scopes = Array.from({ length: 10 }, (_, i) => `project:p${i}`);
      const ok = await gw.gql<{ context: { budget: { maxTokens: number } } }>(
        'query($input: ContextInput!) { context(input: $input) { budget { maxTokens } } }',
        { input: { namespaces: [NS], query: 'deploy', scopes, k: 64 } },
      );
      expect(ok.errors).toBeUndefined();
      expect(ok.data!.context.budget.maxTokens).toBe(8000);
    });

    it('answers FORBIDDEN for a namespace the principal may not read', async () => {
      const res = await gw.gql(
        CONTEXT_QUERY,
        { input: { namespaces: [NS], query: 'deploy' } },
        {
          headers: { 'x-test-principal': 'outsider' },
        },
      );
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    });
  });

  describe('budget', () => {
    it('drops every item when the budget is smaller than one item', async () => {
      const pack = await compile(gw, { namespaces: [NS], query: 'deploy failed on step 3', budgetTokens: 5 });
      expectWellFormed(pack, 5);
      expect(allItems(pack)).toHaveLength(0);
      expect(pack.text).toBe('');
      expect(pack.budget.dropped.length).toBeGreaterThan(0);
      expect(pack.budget.dropped.every((d) => d.reason === 'OVER_BUDGET' && d.tokenEstimate > 5)).toBe(true);
      expect(pack.emptyReason).toBe('budget_too_small');
      const smallest = Math.min(...pack.budget.dropped.map((d) => d.tokenEstimate));
      expect(pack.warnings).toContain(
        `budget_too_small: the smallest item found needs about ${smallest} tokens with its headers, the budget is 5`,
      );
    });

    it('packs a budget exactly full; one token less drops something', async () => {
      const input = { namespaces: [NS], query: 'deploy failed on step 3', anchors: ['person:alice'] };
      const roomy = await compile(gw, input);
      const used = roomy.budget.used;
      const exact = await compile(gw, { ...input, budgetTokens: used });
      expectWellFormed(exact, used);
      expect(exact.budget.used).toBe(used);
      expect(exact.budget.dropped).toEqual([]);
      expect(allItems(exact).map((i) => i.id)).toEqual(allItems(roomy).map((i) => i.id));
      const short = await compile(gw, { ...input, budgetTokens: used - 1 });
      expectWellFormed(short, used - 1);
      expect(short.budget.dropped.some((d) => d.reason === 'OVER_BUDGET')).toBe(true);
      expect(allItems(short).length).toBeLessThan(allItems(roomy).length);
    });

    it('a huge ephemeral context goes first, is cut to fit, and the rest is dropped', async () => {
      const huge = { log: 'step 3 failed; '.repeat(40_000) };
      const pack = await compile(gw, {
        namespaces: [NS],
        query: 'deploy failed on step 3',
        ephemeralContext: huge,
        budgetTokens: 600,
      });
      expectWellFormed(pack, 600);
      expect(pack.sections.map((s) => s.kind)).toEqual(['CURRENT']);
      const current = section(pack, 'CURRENT')[0]!;
      expect(current.text.startsWith('log: step 3 failed; ')).toBe(true);
      expect(current.text.endsWith('…[truncated]')).toBe(true);
      expect(pack.budget.truncated).toBe(true);
      expect(pack.warnings.some((w) => w.startsWith('current_truncated'))).toBe(true);
      expect(pack.budget.dropped.length).toBeGreaterThan(0);
      expect(pack.budget.used).toBeGreaterThan(590);
    });

    it('packs the same text reached twice only once', async () => {
      await retainDocuments(gw, NS, [
        {
          key: 'doc:copy-a',
          title: 'Copy A',
          content: 'Zebra crossings are painted every spring by the city.',
        },
        {
          key: 'doc:copy-b',
          title: 'Copy B',
          content: 'Zebra crossings are painted every spring by the city.',
        },
      ]);
      const pack = await compile(gw, {
        namespaces: [NS],
        query: 'zebra crossings painted spring',
        strategy: 'EXACT',
      });
      const zebra = allItems(pack).filter((i) => i.text.startsWith('Zebra crossings'));
      expect(zebra).toHaveLength(1);
      const trace = (await readTrace(gw, NS, pack.traceId))!;
      const dup = trace.decisions.find((d) => d.reason === 'DUPLICATE');
      expect(dup).toMatchObject({ decision: 'EXCLUDED', duplicateOf: zebra[0]!.id });
    });
  });

  describe('recall floor', () => {
    const FLOOR = 'floor';
    beforeAll(async () => {
      await retainDocuments(gw, FLOOR, [
        { key: 'doc:a', title: 'Bananas', content: 'Bananas ripen faster next to apples in a paper bag.' },
        {
          key: 'doc:b',
          title: 'Trains',
          content: 'The night train to Vienna leaves at ten from platform four.',
        },
      ]);
    });

    it('without a floor the budget is filled whatever the relevance', async () => {
      const pack = await compile(gw, { namespaces: [FLOOR], query: 'quantum chromodynamics lattice' });
      expect(allItems(pack).length).toBeGreaterThan(0);
      expect(pack.emptyReason).toBeNull();
    });

    it('a pack emptied only by the floor says no_relevant_memory and is not an error', async () => {
      const pack = await compile(gw, {
        namespaces: [FLOOR],
        query: 'quantum chromodynamics lattice',
        maxDistance: 0.05,
      });
      expect(allItems(pack)).toHaveLength(0);
      expect(pack.text).toBe('');
      expect(pack.emptyReason).toBe('no_relevant_memory');
      expect(pack.warnings).toEqual(['no_relevant_memory: memory holds nothing that matches the query']);
      expect(pack.budget.dropped.length).toBeGreaterThan(0);
      expect(pack.budget.dropped.every((d) => d.reason === 'BELOW_RELEVANCE_FLOOR')).toBe(true);
      const trace = (await readTrace(gw, FLOOR, pack.traceId))!;
      const floored = trace.decisions.filter((d) => d.reason === 'BELOW_RELEVANCE_FLOOR');
      expect(floored.length).toBe(pack.budget.dropped.length);
      expect(floored.every((d) => d.decision === 'EXCLUDED' && (d.distance ?? 0) > 0.05)).toBe(true);
    });

    it('keeps what is close enough, drops the rest', async () => {
      const query = 'Bananas ripen faster next to apples in a paper bag.';
      const pack = await compile(gw, { namespaces: [FLOOR], query, maxDistance: 0.2 });
      expect(allItems(pack).map((i) => i.text)).toEqual([query]);
      expect(pack.emptyReason).toBeNull();
      expect(pack.budget.dropped.map((d) => d.reason)).toContain('BELOW_RELEVANCE_FLOOR');
    });

    it('an empty namespace is not "no relevant memory": it holds nothing to read, and the pack says so', async () => {
      const pack = await compile(gw, { namespaces: ['nothing-here'], query: 'anything', maxDistance: 0.1 });
      expect(allItems(pack)).toHaveLength(0);
      expect(pack.emptyReason).toBe('unknown_namespace');
      expect(pack.warnings).toEqual(['unknown_namespace: "nothing-here" hold(s) nothing you can read']);
    });
  });

  describe('facts: hard filters, conflicts, as-of', () => {
    const FACTS = 'facts';

    it('serves both versions of an open conflict, marked, listed and warned about', async () => {
      const [a] = await assertFacts(gw, FACTS, [
        { subject: 'svc:billing', predicate: 'owned_by', object: 'team:alpha' },
      ]);
      const [b] = await assertFacts(gw, FACTS, [
        {
          subject: 'svc:billing',
          predicate: 'owned_by',
          object: 'team:beta',
          attributes: { contradicts: a },
        },
      ]);
      const pack = await compile(gw, { namespaces: [FACTS], anchors: ['svc:billing'], strategy: 'GRAPH' });
      const facts = servedFacts(pack);
      const versions = facts.filter((i) => i.text.startsWith('svc:billing owned_by'));
      expect(versions).toHaveLength(2);
      expect(versions.every((v) => v.conflict)).toBe(true);
      expect(versions.every((v) => v.text.includes('[CONFLICT'))).toBe(true);
      expect(pack.conflicts.sort()).toEqual([a, b].sort());
      expect(pack.warnings.some((w) => w.startsWith('open_conflict: 2 fact(s)'))).toBe(true);

      // A budget with room for one version only serves neither: a conflict is never silently resolved.
      const oneVersion = versions[0]!.tokenEstimate;
      const tight = await compile(gw, {
        namespaces: [FACTS],
        anchors: ['svc:billing'],
        strategy: 'GRAPH',
        budgetTokens: 8 + 6 + oneVersion + 2,
      });
      const served = servedFacts(tight).filter((i) => i.text.startsWith('svc:billing owned_by'));
      expect(served).toHaveLength(0);
      const dropped = tight.budget.dropped.map((d) => parseGlobalId(d.id)?.parts[1]);
      expect(dropped).toEqual(expect.arrayContaining([a, b]));
    });

    it('as-of packs on both sides of a supersession serve the version valid then', async () => {
      const [v1] = await assertFacts(gw, FACTS, [
        { subject: 'svc:api', predicate: 'version', object: 'release:1', validFrom: '2024-01-01T00:00:00Z' },
      ]);
      const results = await supersedeFact(gw, FACTS, v1!, {
        subject: 'svc:api',
        predicate: 'version',
        object: 'release:2',
        validFrom: '2024-06-01T00:00:00Z',
      });
      const v2 = results[0]!.key!;
      const at = async (asOf: string) =>
        servedFacts(
          await compile(gw, { namespaces: [FACTS], anchors: ['svc:api'], strategy: 'GRAPH', asOf }),
        ).map((i) => parseGlobalId(i.id)?.parts[1]);
      expect(await at('2024-03-01T00:00:00Z')).toEqual([v1]);
      expect(await at('2024-09-01T00:00:00Z')).toEqual([v2]);
      expect(await at('2024-06-01T00:00:00Z')).toEqual([v2]); // half-open: the successor holds at T
      expect(await at('2023-06-01T00:00:00Z')).toEqual([]);
      const now = await compile(gw, { namespaces: [FACTS], anchors: ['svc:api'], strategy: 'GRAPH' });
      expect(servedFacts(now).map((i) => i.text)).toEqual([
        'svc:api version release:2 (valid 2024-06-01 → now)',
      ]);
    });

    it('hides facts whose evidence was redacted, with a warning and a BLOCKED decision', async () => {
      const [obs] = await recordObservations(gw, FACTS, [
        {
          source: { system: 'mail', externalId: 'e1' },
          kind: 'email',
          occurredAt: '2024-04-01T00:00:00Z',
          content: 'Bob now leads the payments team.',
          assertions: [{ fact: { subject: 'person:bob', predicate: 'leads', object: 'team:payments' } }],
        },
      ]);
      const before = await compile(gw, { namespaces: [FACTS], anchors: ['person:bob'], strategy: 'GRAPH' });
      expect(servedFacts(before).map((i) => i.text)).toContain(
        'person:bob leads team:payments (valid 2024-04-01 → now)',
      );
      await redactObservation(gw, FACTS, obs!.key!);
      const after = await compile(gw, { namespaces: [FACTS], anchors: ['person:bob'], strategy: 'GRAPH' });
      expect(servedFacts(after)).toHaveLength(0);
      expect(after.warnings).toContain(
        'evidence_lost: 1 fact(s) hidden because their evidence was redacted or purged',
      );
      const trace = (await readTrace(gw, FACTS, after.traceId))!;
      expect(trace.decisions.find((d) => d.kind === 'fact')).toMatchObject({
        decision: 'BLOCKED',
        reason: 'EVIDENCE_LOST',
        score: null,
      });
    });
  });

  describe('scopes, visibility, namespaces, PII', () => {
    it('relevance scopes keep intersecting and unscoped items and earn the scope bonus', async () => {
      const pack = await compile(gw, {
        namespaces: [NS],
        query: 'deploy failed on step 3',
        scopes: ['project:apollo'],
        anchors: ['person:alice'],
      });
      const items = allItems(pack).filter((i) => i.kind !== 'current');
      expect(items.some((i) => i.signals.scope === 0.004)).toBe(true);
      // The ticket is scoped to another project: never in the pack.
      expect(items.some((i) => i.text.includes('OPS-9'))).toBe(false);
      const unscoped = await compile(gw, {
        namespaces: [NS],
        strategy: 'BRIEFING',
        scopes: ['project:zeus'],
      });
      expect(allItems(unscoped).some((i) => i.text.includes('OPS-9'))).toBe(true);
      expect(allItems(unscoped).some((i) => i.text.includes('Alice says'))).toBe(false);
    });

    it('never shows items outside the principal’s visibility scopes, and masks PII for it', async () => {
      const local = await compile(gw, { namespaces: [NS], query: 'deploy step 3 midnight secret project' });
      expect(allItems(local).some((i) => i.text.includes('midnight'))).toBe(true);
      expect(allItems(local).some((i) => i.text.includes('alice@example.com'))).toBe(true);
      const res = await gw.gql<{ context: Pack }>(
        CONTEXT_QUERY,
        { input: { namespaces: [NS], query: 'deploy step 3 midnight secret project' } },
        { headers: { 'x-test-principal': 'restricted' } },
      );
      expect(res.errors).toBeUndefined();
      const pack = res.data!.context;
      expect(allItems(pack).some((i) => i.text.includes('midnight'))).toBe(false);
      expect(pack.text).not.toContain('midnight');
      expect(pack.text).not.toContain('alice@example.com');
      const alice = allItems(pack).find((i) => i.text.startsWith('Alice says'));
      expect(alice?.text).toContain('[email]');
      expectWellFormed(pack, 8000);
    });

    it('keeps namespaces apart: another namespace is never a candidate', async () => {
      await retainDocuments(gw, 'other', [
        {
          key: 'doc:other',
          title: 'Other',
          content: 'The deploy failed on step 3 in the other namespace too.',
        },
      ]);
      const pack = await compile(gw, { namespaces: [NS], query: 'deploy failed on step 3 other namespace' });
      expect(allItems(pack).every((i) => i.kind === 'current' || i.namespace === NS)).toBe(true);
      const both = await compile(gw, {
        namespaces: [NS, 'other'],
        query: 'deploy failed on step 3 other namespace',
      });
      expect(new Set(allItems(both).map((i) => i.namespace))).toEqual(new Set([NS, 'other']));
    });
  });

  describe('items', () => {
    it('carry Relay ids that node(id) and provenance(id) resolve, and their provenance chain', async () => {
      const res = await gw.gql<{ context: { sections: { kind: string; items: PackItem[] }[] } }>(
        CONTEXT_WITH_PROVENANCE,
        { input: { namespaces: [NS], query: 'deploy failed on step 3 E4021', anchors: ['person:alice'] } },
      );
      expect(res.errors).toBeUndefined();
      const items = allItems(res.data!.context).filter((i) => i.kind !== 'current');
      expect(new Set(items.map((i) => i.kind))).toEqual(new Set(['fact', 'chunk', 'entity', 'observation']));
      for (const item of items) {
        expect(item.provenance!.steps[0]!.kind).toBe(item.kind);
        expect(item.provenance!.steps[0]!.id).toBe(item.id);
      }
      const fact = items.find((i) => i.kind === 'fact' && i.text.startsWith('Alice works_on'))!;
      expect(fact.provenance!.steps.map((s) => s.kind)).toEqual(['fact', 'observation', 'source']);
      const episode = items.find((i) => i.text.startsWith('Alice investigated'))!;
      expect(episode.provenance!.steps.map((s) => s.kind)).toContain('observation');
      const node = await gw.gql<{ node: { id: string } | null }>('query($id: ID!) { node(id: $id) { id } }', {
        id: fact.id,
      });
      expect(node.data?.node?.id).toBe(fact.id);
    });

    it('costs a bounded number of SQL statements per request', async () => {
      const res = await gw.gql(CONTEXT_QUERY, {
        input: { namespaces: [NS], query: 'deploy failed on step 3 E4021', anchors: ['person:alice'] },
      });
      expect(res.errors).toBeUndefined();
      // 3 query channels + 3 structure channels + ≤ 5 phase-2 reads + ≤ 5 multi-hop + 1 trace.
      expect(res.extensions?.sql?.statements).toBeLessThanOrEqual(17);
    });
  });

  describe('multi-hop expansion', () => {
    it('pulls in evidence sharing an entity with what was packed, marked in the trace', async () => {
      const HOP = 'hop';
      await retainDocuments(gw, HOP, [
        {
          key: 'doc:review',
          title: 'Review',
          content: 'The quarterly budget review was led by Marguerite this year.',
        },
        { key: 'doc:lisbon', title: 'Moves', content: 'Marguerite moved to the Lisbon office in May.' },
      ]);
      const pack = await compile(gw, {
        namespaces: [HOP],
        query: 'quarterly budget review',
        strategy: 'EXACT',
      });
      const texts = allItems(pack).map((i) => i.text);
      expect(texts).toContain('Marguerite moved to the Lisbon office in May.');
      const hop = allItems(pack).find((i) => i.text.startsWith('Marguerite moved'))!;
      expect(hop.signals.channels.map((c) => c.channel)).toEqual(['multi_hop']);
      const trace = (await readTrace(gw, HOP, pack.traceId))!;
      expect(trace.decisions.find((d) => d.id === hop.id)).toMatchObject({
        decision: 'INCLUDED',
        reason: 'MULTI_HOP_EXPANSION',
        expansion: 'MULTI_HOP_EXPANSION',
      });
      expect(trace.channels.multi_hop).toMatchObject({ status: 'ok', weight: 0.5 });
    });
  });

  describe('degradation', () => {
    it('a failed channel degrades the pack with a warning, never the call', async () => {
      const failing = {
        model: 'hashing:64',
        dimensions: 64,
        embed: () => Promise.reject(new Error('provider down')),
      };
      const pack = await compileContext(
        {
          namespaces: [NS],
          query: 'deploy failed on step 3',
          scopes: [],
          anchors: [],
          subject: null,
          ephemeralContext: null,
          budgetTokens: 2000,
          strategy: 'HYBRID',
          asOf: null,
          k: 8,
          maxDistance: null,
        },
        {
          db: gw.db,
          embedder: failing,
          principal: { id: 'local', scopes: null, pii: true },
          charsPerToken: 3,
          traceRetentionDays: 30,
          pruneDue: () => [],
          channelTimeoutMs: 5000,
        },
      );
      expect(pack.warnings.some((w) => w.startsWith('channel_failed: vector'))).toBe(true);
      expect(allItems(pack).length).toBeGreaterThan(0);
      expect(allItems(pack).some((i) => i.signals.channels.some((c) => c.channel === 'vector'))).toBe(false);
    });

    it('a channel slower than its timeout is abandoned with a warning', async () => {
      const slow = {
        model: 'hashing:64',
        dimensions: 64,
        embed: (texts: string[]) =>
          new Promise<number[][]>((resolve) =>
            setTimeout(() => void createHashingEmbedder(64).embed(texts).then(resolve), 1500),
          ),
      };
      const pack = await compileContext(
        {
          namespaces: [NS],
          query: 'deploy failed on step 3',
          scopes: [],
          anchors: [],
          subject: null,
          ephemeralContext: null,
          budgetTokens: 2000,
          strategy: 'SEMANTIC',
          asOf: null,
          k: 8,
          maxDistance: null,
        },
        {
          db: gw.db,
          embedder: slow,
          principal: { id: 'local', scopes: null, pii: true },
          charsPerToken: 3,
          traceRetentionDays: 30,
          pruneDue: () => [],
          channelTimeoutMs: 200,
        },
      );
      expect(pack.warnings.some((w) => w.startsWith('channel_timeout: vector'))).toBe(true);
      expect(allItems(pack)).toHaveLength(0);
    });
  });

  describe('ephemeral context', () => {
    it('is rendered as CURRENT and never stored anywhere', async () => {
      const marker = 'EPHEMERAL-MARKER-7f3a9c';
      const pack = await compile(gw, {
        namespaces: [NS, 'other'],
        query: 'deploy failed on step 3',
        anchors: ['person:alice'],
        ephemeralContext: { state: `running ${marker}`, nested: { note: marker } },
      });
      expect(section(pack, 'CURRENT')[0]!.text).toContain(marker);
      expect(pack.text).toContain(marker);
      expect(await tablesContaining(gw.db, marker)).toEqual([]);
      // Only its size is in the trace.
      const trace = (await readTrace(gw, NS, pack.traceId))!;
      expect(trace.request.ephemeralContext).toMatchObject({ present: true });
      expect((trace.request.ephemeralContext as { chars: number }).chars).toBeGreaterThan(marker.length);
      expect(JSON.stringify(trace)).not.toContain(marker);
      // Sanity: the scan does find what is stored.
      expect(await tablesContaining(gw.db, 'E4021')).toEqual(expect.arrayContaining(['chunks']));
    });
  });
});
