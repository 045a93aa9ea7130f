import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { assertFacts, readTrace, recordObservations, supersedeFact } from '../helpers/seed-context.js';

const NS = 'routing';
// Reference time of every query: relative windows resolve against it, never the clock.
const AS_OF = '2023-06-15T12:00:00.000Z';

const ROUTE_FIELDS = `queryType lookupMode entityHints attribute reason source fallbackReason referenceTime notes
  compactedSessions
  resolvedEntities { hint key title matchedBy }
  timeWindow { kind since until phrase }
  attributeValue { entityKey name value validFrom observationId }
  paths { length entities { key } facts { predicate } }
  facets { topics { key label count } entities { key label count } predicates { key label count } }`;

const AUTO = /* GraphQL */ `
  query Auto($input: ContextInput!) {
    context(input: $input) {
      traceId text emptyReason
      sections { kind items { kind id text score tokenEstimate } }
      route { ${ROUTE_FIELDS} }
      invalidatedFacts { factId subject { key } predicate object { key } status validTo }
    }
  }
`;
const ROUTE = /* GraphQL */ `
  query Route($input: RouteInput!) { route(input: $input) { ${ROUTE_FIELDS} } }
`;

interface Route {
  queryType: string;
  lookupMode: string | null;
  entityHints: string[];
  attribute: string | null;
  reason: string;
  source: string;
  fallbackReason: string | null;
  referenceTime: string;
  notes: string[];
  compactedSessions: string[];
  resolvedEntities: { hint: string; key: string; title: string; matchedBy: string }[];
  timeWindow: { kind: string; since: string | null; until: string | null; phrase: string } | null;
  attributeValue: {
    entityKey: string;
    name: string;
    value: unknown;
    validFrom: string;
    observationId: string;
  } | null;
  paths: { length: number; entities: { key: string }[]; facts: { predicate: string }[] }[];
  facets: Record<
    'topics' | 'entities' | 'predicates',
    { key: string; label: string; count: number }[]
  > | null;
}
interface AutoPack {
  traceId: string;
  text: string;
  emptyReason: string | null;
  sections: {
    kind: string;
    items: { kind: string; id: string; text: string; score: number; tokenEstimate: number }[];
  }[];
  route: Route;
  invalidatedFacts: {
    factId: string;
    subject: { key: string };
    predicate: string;
    object: { key: string };
    status: string;
  }[];
}

async function auto(gw: TestGateway, query: string, extra: Record<string, unknown> = {}): Promise<AutoPack> {
  const res = await gw.gql<{ context: AutoPack }>(AUTO, {
    input: { namespaces: [NS], query, strategy: 'AUTO', asOf: AS_OF, budgetTokens: 1500, ...extra },
  });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data!.context;
}

/** A budget the May 2023 pack overruns (its facts are dropped), so its session is compacted. */
const TIGHT = { budgetTokens: 200 };

const texts = (p: AutoPack) => p.sections.flatMap((s) => s.items.map((i) => i.text)).join('\n');

const obs = (
  id: string,
  occurredAt: string,
  content: string,
  assertions: Record<string, unknown>[],
  stream = 'chat-1',
) => ({
  kind: 'message',
  occurredAt,
  content,
  source: { system: 'test', stream, externalId: id },
  assertions,
});

async function seed(gw: TestGateway) {
  const caroline = (attributes: Record<string, unknown>) => ({
    entity: { key: 'person:caroline', kind: 'person', title: 'Caroline', attributes },
  });
  const melanie = { entity: { key: 'person:melanie', kind: 'person', title: 'Melanie' } };
  const results = await recordObservations(gw, NS, [
    obs(
      'o1',
      '2023-05-01T10:00:00Z',
      'Caroline went to the support group and gave everyone her phone number.',
      [
        caroline({ phone: '555-0101' }),
        { fact: { subject: 'person:caroline', predicate: 'lives_in', object: 'city:boston' } },
      ],
    ),
    obs('o2', '2023-05-03T10:00:00Z', 'Melanie painted a sunrise over the lake with her kids.', [
      melanie,
      { fact: { subject: 'person:melanie', predicate: 'paints', object: 'art:sunrise' } },
    ]),
    obs('o3', '2023-05-05T10:00:00Z', 'Caroline and Melanie met at the pottery class on Friday.', [
      { fact: { subject: 'person:caroline', predicate: 'attends', object: 'class:pottery' } },
      { fact: { subject: 'person:melanie', predicate: 'attends', object: 'class:pottery' } },
    ]),
    obs(
      'o4',
      '2023-06-10T10:00:00Z',
      'Caroline moved to Denver for a new counselling job.',
      [caroline({ city: 'Denver' })],
      'chat-2',
    ),
  ]);
  const ids = results.map((r) => r.key);
  const { rows } = await gw.db.query<{ factId: string }>(
    `SELECT fact_id AS "factId" FROM facts WHERE namespace = $1 AND predicate = 'lives_in'`,
    [NS],
  );
  await supersedeFact(gw, NS, rows[0]!.factId, {
    subject: 'person:caroline',
    predicate: 'lives_in',
    object: 'city:denver',
    validFrom: '2023-06-10T10:00:00Z',
  });
  await assertFacts(gw, NS, [
    {
      subject: 'person:melanie',
      predicate: 'visited',
      object: 'city:denver',
      validFrom: '2023-06-12T00:00:00Z',
    },
  ]);
  return ids;
}

describe('intent-routed context (strategy AUTO)', () => {
  let gw: TestGateway;
  let observationIds: (string | null)[];

  beforeAll(async () => {
    gw = await startTestGateway();
    observationIds = await seed(gw);
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
  });

  it('ENTITY_LOOKUP/attribute returns the value as of asOf with its provenance and the superseded facts', async () => {
    const pack = await auto(gw, "What is Caroline's phone?");
    expect(pack.route).toMatchObject({
      queryType: 'ENTITY_LOOKUP',
      lookupMode: 'ATTRIBUTE',
      attribute: 'phone',
    });
    expect(pack.route.resolvedEntities[0]).toMatchObject({ key: 'person:caroline', matchedBy: 'TITLE' });
    expect(pack.route.attributeValue).toMatchObject({
      entityKey: 'person:caroline',
      name: 'phone',
      value: '555-0101',
    });
    expect(pack.route.attributeValue!.observationId).toBe(observationIds[3]);
    // Before Denver the attribute version came from the first observation.
    const earlier = await auto(gw, "What is Caroline's phone?", { asOf: '2023-05-02T00:00:00Z' });
    expect(earlier.route.attributeValue!.observationId).toBe(observationIds[0]);
    // "Then" alongside "now": Boston was superseded by Denver.
    expect(pack.invalidatedFacts).toEqual([
      expect.objectContaining({
        subject: { key: 'person:caroline' },
        predicate: 'lives_in',
        object: { key: 'city:boston' },
        status: 'SUPERSEDED',
      }),
    ]);
    const trace = await readTrace(gw, NS, pack.traceId);
    expect(trace!.request.route).toMatchObject({
      queryType: 'ENTITY_LOOKUP',
      attribute: 'phone',
      source: 'RULES',
    });
  });

  it('an unknown attribute falls back to broad mode: the entity’s episodes and facts', async () => {
    const pack = await auto(gw, "What is Caroline's shoe size?");
    expect(pack.route).toMatchObject({
      queryType: 'ENTITY_LOOKUP',
      lookupMode: 'BROAD',
      attributeValue: null,
    });
    expect(pack.route.notes).toContain('attribute_unknown');
    expect(texts(pack)).toMatch(/Caroline/);
  });

  it('RELATIONSHIP returns the connecting paths and the facts around both entities', async () => {
    const pack = await auto(gw, 'How do Caroline and Melanie know each other?');
    expect(pack.route.queryType).toBe('RELATIONSHIP');
    expect(pack.route.resolvedEntities.map((e) => e.key)).toEqual(['person:caroline', 'person:melanie']);
    // Two paths of two hops: the pottery class, and Denver (Caroline lives there, Melanie visited).
    expect(pack.route.paths.map((p) => p.entities.map((e) => e.key).join(' > ')).sort()).toEqual([
      'person:caroline > city:denver > person:melanie',
      'person:caroline > class:pottery > person:melanie',
    ]);
    expect(texts(pack)).toMatch(/pottery/);
  });

  it('TEMPORAL keeps to the window', async () => {
    const pack = await auto(gw, 'What happened in May 2023?');
    expect(pack.route.timeWindow).toMatchObject({
      kind: 'RANGE',
      since: '2023-05-01T00:00:00.000Z',
      until: '2023-06-01T00:00:00.000Z',
    });
    const all = texts(pack);
    expect(all).not.toMatch(/Denver/);
    const june = await auto(gw, 'What happened with Caroline in June 2023?');
    expect(texts(june)).toMatch(/Denver/);
    expect(texts(june)).not.toMatch(/pottery|sunrise/);
  });

  it('the AUTO trace is written from the pack as served, after compaction', async () => {
    const pack = await auto(gw, 'What happened in May 2023?', TIGHT);
    expect(pack.route.compactedSessions).toEqual(['chat-1']);
    const trace = (await readTrace(gw, NS, pack.traceId))!;
    const served = pack.sections.flatMap((s) => s.items);
    const included = trace.decisions.filter((d) => d.decision === 'INCLUDED');
    expect(included.map((d) => d.id).sort()).toEqual(served.map((i) => i.id).sort());
    for (const item of served) {
      expect(included.find((d) => d.id === item.id)).toMatchObject({
        kind: item.kind,
        tokenEstimate: item.tokenEstimate,
        score: item.score,
      });
    }
    // The items the compact stands for are traced as replaced, not as served.
    const replaced = trace.decisions.filter((d) => d.reason === 'SESSION_COMPACTED');
    expect(replaced.length).toBeGreaterThan(2);
    expect(replaced.every((d) => d.decision === 'EXCLUDED')).toBe(true);
    expect(trace.request.result).toMatchObject({ items: served.length });
    expect((trace.request.route as { queryType: string }).queryType).toBe(pack.route.queryType);
  });

  it('in a pack out of budget, more than two items of one session are replaced by its compact, scored by the best of them', async () => {
    const pack = await auto(gw, 'What happened in May 2023?', TIGHT);
    expect(pack.route.compactedSessions).toEqual(['chat-1']);
    const items = pack.sections.flatMap((s) => s.items);
    const compacts = items.filter((i) => i.kind === 'session');
    expect(compacts).toHaveLength(1);
    expect(compacts[0]!.text).toMatch(/^Session chat-1: 3 messages, 2023-05-01 – 2023-05-05\./);
    // The stored compact holds each (short) message whole; the packed one is made of its lines
    // and costs no more than the items it replaced.
    const stored = await gw.db.query<{ summary: string }>(
      'SELECT summary FROM session_compacts WHERE namespace = $1 AND session_id = $2',
      [NS, 'chat-1'],
    );
    for (const sentence of ['support group', 'sunrise', 'pottery'])
      expect(stored.rows[0]!.summary).toContain(sentence);
    const storedLines = stored.rows[0]!.summary.split('\n');
    for (const line of compacts[0]!.text.split('\n')) expect(storedLines).toContain(line);
    expect(compacts[0]!.text).toContain('support group');
    // None of the replaced items is left beside it.
    expect(items.filter((i) => i.kind === 'chunk' || i.kind === 'observation')).toEqual([]);
    expect(pack.text).toContain('Session chat-1');
    const { rows } = await gw.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM session_compacts WHERE namespace = $1',
      [NS],
    );
    expect(rows[0]!.n).toBe(1);
    // A session with a single selected item is left alone.
    const june = await auto(gw, 'What happened with Caroline in June 2023?', TIGHT);
    expect(june.route.compactedSessions).toEqual([]);
  });

  it('with budget left, the original messages are served, not a compact', async () => {
    const pack = await auto(gw, 'What happened in May 2023?');
    expect(pack.route.compactedSessions).toEqual([]);
    const items = pack.sections.flatMap((s) => s.items);
    expect(items.filter((i) => i.kind === 'session')).toEqual([]);
    for (const sentence of ['support group', 'sunrise', 'pottery class'])
      expect(texts(pack)).toContain(sentence);
  });

  it('TEMPORAL_FACETS counts topics, entities and predicates without reading content', async () => {
    const pack = await auto(gw, 'What topics did I talk about in May 2023?');
    expect(pack.route.queryType).toBe('TEMPORAL_FACETS');
    expect(pack.sections).toEqual([]);
    expect(pack.text).toBe('');
    const f = pack.route.facets!;
    expect(f.topics).toEqual([{ key: 'message', label: 'message', count: 3 }]);
    expect(f.entities.find((e) => e.key === 'person:caroline')).toEqual({
      key: 'person:caroline',
      label: 'Caroline',
      count: 2,
    });
    expect(f.predicates.map((p) => [p.key, p.count])).toEqual([
      ['attends', 2],
      ['lives_in', 1],
      ['paints', 1],
    ]);
  });

  it('facets(namespace, since, until) is the same count as a query field', async () => {
    const res = await gw.gql<{ facets: Route['facets'] }>(
      `query { facets(namespace: "${NS}", since: "2023-06-01T00:00:00Z") {
        topics { key label count } entities { key label count } predicates { key label count } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.facets!.topics).toEqual([{ key: 'message', label: 'message', count: 1 }]);
    expect(res.data!.facets!.predicates.map((p) => p.key).sort()).toEqual(['lives_in', 'visited']);
    const bad = await gw.gql(
      `query { facets(namespace: "${NS}", since: "2023-06-01T00:00:00Z", until: "2023-05-01T00:00:00Z") { topics { key } } }`,
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('EXPLORATORY/ASPECT compile the hybrid pack; NO_SEARCH reads nothing', async () => {
    const aspect = await auto(gw, 'What does Melanie like to paint?');
    expect(aspect.route.queryType).toBe('ASPECT');
    expect(texts(aspect)).toMatch(/sunrise/);
    const hello = await auto(gw, 'hello!');
    expect(hello.route.queryType).toBe('NO_SEARCH');
    expect(hello.sections).toEqual([]);
    expect(hello.invalidatedFacts).toEqual([]);
  });

  it('route(input) inspects without compiling and resolves against the given reference time', async () => {
    const res = await gw.gql<{ route: Route }>(ROUTE, {
      input: {
        namespaces: [NS],
        query: 'Who did I talk to last week?',
        referenceTime: '2023-05-06T00:00:00Z',
      },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data!.route).toMatchObject({
      queryType: 'TEMPORAL_FACETS',
      source: 'RULES',
      referenceTime: '2023-05-06T00:00:00.000Z',
      timeWindow: { kind: 'RANGE', since: '2023-04-29T00:00:00.000Z', until: '2023-05-06T00:00:00.000Z' },
    });
  });

  it('other strategies carry no route', async () => {
    const res = await gw.gql<{ context: { route: null; invalidatedFacts: unknown[] } }>(
      'query($i: ContextInput!) { context(input: $i) { route { queryType } invalidatedFacts { factId } } }',
      { i: { namespaces: [NS], query: 'Caroline' } },
    );
    expect(res.data!.context).toEqual({ route: null, invalidatedFacts: [] });
  });
});

describe('router LLM refinement over a local OpenAI-compatible server', () => {
  let gw: TestGateway;
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(
      {
        MEMGATE_LLM: 'openai:router-test',
        OPENAI_BASE_URL: fake.url,
        // The router's deadline is min(4 s, statement timeout): keeps the timeout case short.
        MEMGATE_STATEMENT_TIMEOUT_MS: '1500',
      },
      // The last model call must be the router's: no background extraction worker.
      { extractionWorker: false },
    );
    await recordObservations(gw, NS, [
      obs('m1', '2023-05-01T10:00:00Z', 'Mike Ross started at the law firm.', [
        { entity: { key: 'person:mike', kind: 'person', title: 'Mike Ross' } },
      ]),
    ]);
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const route = async (query: string) => {
    const res = await gw.gql<{ route: Route }>(ROUTE, {
      input: { namespaces: [NS], query, referenceTime: AS_OF },
    });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return res.data!.route;
  };

  it('uses a valid reply restricted to existing entities', async () => {
    fake.handle(() => ({
      content: JSON.stringify({
        queryType: 'ENTITY_LOOKUP',
        lookupMode: 'BROAD',
        entityHints: ['Mike Ross'],
      }),
    }));
    const r = await route('What has Mike been working on?');
    expect(r).toMatchObject({
      source: 'LLM',
      queryType: 'ENTITY_LOOKUP',
      lookupMode: 'BROAD',
      fallbackReason: null,
    });
    expect(r.resolvedEntities.map((e) => e.key)).toEqual(['person:mike']);
    const sent = fake.requests.at(-1)!.messages.at(-1)!.content;
    expect(JSON.parse(sent).candidates).toEqual(['Mike Ross']);
  });

  it('falls back to the rules on invalid output', async () => {
    fake.handle(() => ({
      content: JSON.stringify({ queryType: 'ENTITY_LOOKUP', entityHints: ['Harvey Specter'] }),
    }));
    const invented = await route('What has Mike been working on?');
    expect(invented).toMatchObject({ source: 'RULES', queryType: 'ASPECT' });
    expect(invented.fallbackReason).toMatch(/^malformed/);
    fake.handle(() => ({ raw: '{"queryType": "ENTITY_LOOK' }));
    const broken = await route('What has Mike been working on?');
    expect(broken.source).toBe('RULES');
    expect(broken.fallbackReason).not.toBeNull();
  });

  it('falls back to the rules on a timeout', async () => {
    fake.handle(() => ({ delayMs: 3000, reply: { content: '{"queryType":"ASPECT","entityHints":[]}' } }));
    const started = Date.now();
    const r = await route('What has Mike been working on?');
    expect(r).toMatchObject({ source: 'RULES', queryType: 'ASPECT' });
    expect(r.fallbackReason).toMatch(/^timeout/);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
