import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { sumOfSignals } from '../helpers/score-signals.js';
import {
  type Pack,
  assertFacts,
  compile,
  recordObservations,
  retainDocuments,
  section,
  supersedeFact,
  upsertEntities,
} from '../helpers/seed-context.js';

// A pack answers "what holds now" first: for the entities a query names, their facts valid at
// asOf and attributes as of asOf lead the pack (CURRENT_STATE), the ones matching the question
// first; a superseded fact only as history, marked, right after its successor.

const NS = 'current-state';

const message = (id: string, occurredAt: string, content: string) => ({
  source: { system: 'chat', stream: 'team', externalId: id },
  kind: 'message',
  occurredAt,
  content,
});

const texts = (pack: Pack, kind: string) => section(pack, kind).map((i) => i.text);

describe('context: the current state leads the pack', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
    await upsertEntities(gw, NS, [
      { key: 'person:lena', kind: 'person', title: 'Lena Ortiz', validFrom: '2024-10-01T08:00:00Z' },
      { key: 'person:marco', kind: 'person', title: 'Marco Bianchi', validFrom: '2024-10-01T08:00:00Z' },
      {
        key: 'person:priya',
        kind: 'person',
        title: 'Priya Nair',
        attributes: { location: 'Berlin', role: 'designer' },
        validFrom: '2024-10-01T08:00:00Z',
      },
      { key: 'project:falcon', kind: 'project', title: 'Project Falcon', validFrom: '2024-10-01T08:00:00Z' },
      { key: 'service:firebase', kind: 'service', title: 'Firebase', validFrom: '2024-10-01T08:00:00Z' },
      { key: 'service:supabase', kind: 'service', title: 'Supabase', validFrom: '2024-10-01T08:00:00Z' },
    ]);
    const [lead, auth] = await assertFacts(gw, NS, [
      {
        subject: 'person:marco',
        predicate: 'LEADS',
        object: 'project:falcon',
        validFrom: '2024-10-01T09:00:00Z',
      },
      {
        subject: 'project:falcon',
        predicate: 'AUTH_PROVIDER',
        object: 'service:firebase',
        validFrom: '2024-10-01T09:00:00Z',
      },
    ]);
    await recordObservations(gw, NS, [
      message(
        't1',
        '2024-10-01T09:00:00Z',
        'Kickoff: Marco leads Falcon. We authenticate users with Firebase.',
      ),
      message('t2', '2024-10-03T09:00:00Z', 'Priya is working from the Berlin office this month.'),
    ]);
    await retainDocuments(gw, NS, [
      {
        key: 'doc:falcon-runbook',
        title: 'Falcon runbook',
        content: 'How to deploy Falcon: build, migrate, promote. Roll back by promoting the previous build.',
        links: ['project:falcon'],
      },
    ]);
    await supersedeFact(gw, NS, lead!, {
      subject: 'person:lena',
      predicate: 'LEADS',
      object: 'project:falcon',
      validFrom: '2024-10-08T09:00:00Z',
    });
    await supersedeFact(gw, NS, auth!, {
      subject: 'project:falcon',
      predicate: 'AUTH_PROVIDER',
      object: 'service:supabase',
      validFrom: '2024-10-10T09:00:00Z',
    });
    await upsertEntities(gw, NS, [
      {
        key: 'person:priya',
        kind: 'person',
        title: 'Priya Nair',
        attributes: { location: 'Lisbon' },
        validFrom: '2024-10-12T08:00:00Z',
      },
    ]);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('opens with the fact that answers the question, its superseded version after it, marked as history', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'Who leads Project Falcon?',
      budgetTokens: 400,
    });
    expect(pack.sections[0]!.kind).toBe('CURRENT_STATE');
    const state = texts(pack, 'CURRENT_STATE');
    expect(state[0]).toBe('Lena Ortiz LEADS Project Falcon (valid 2024-10-08T09:00Z → now)');
    expect(state[1]).toBe(
      '[history, superseded] Marco Bianchi LEADS Project Falcon (valid 2024-10-01T09:00Z → 2024-10-08T09:00Z)',
    );
    // The rendered text follows the sections: the current lead comes before the old one.
    expect(pack.text.indexOf('Lena Ortiz LEADS')).toBeLessThan(pack.text.indexOf('Marco Bianchi LEADS'));
    // Each item's score is its signals' sum; the section's order is the `state` signal.
    for (const item of section(pack, 'CURRENT_STATE')) {
      expect(item.score).toBeCloseTo(sumOfSignals(item.signals), 12);
      expect(item.signals.state).toBeGreaterThan(0);
    }
  });

  it('ranks by how well predicate and object answer the query, paraphrases included', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'Which auth provider does Falcon use?',
      budgetTokens: 400,
    });
    const state = texts(pack, 'CURRENT_STATE');
    expect(state[0]).toBe('Project Falcon AUTH_PROVIDER Supabase (valid 2024-10-10T09:00Z → now)');
    expect(state[1]).toMatch(/^\[history, superseded\] Project Falcon AUTH_PROVIDER Firebase/);
    // The document's link is structure, not state.
    expect(state.some((t) => t.includes('LINKS_TO'))).toBe(false);
  });

  it('serves attributes as of now, the earlier value after the current one', async () => {
    const pack = await compile(gw, { namespaces: [NS], query: 'Where is Priya based?', budgetTokens: 400 });
    const state = texts(pack, 'CURRENT_STATE');
    expect(state[0]).toBe(
      'Priya Nair (person, person:priya) — location: Lisbon (since 2024-10-12T08:00Z; before: Berlin); role: designer',
    );
  });

  it('as of an earlier instant: what held then, no later value anywhere in the pack', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'Who leads Project Falcon and which auth provider does it use? Where is Priya based?',
      budgetTokens: 2000,
      asOf: '2024-10-05T12:00:00Z',
    });
    const state = texts(pack, 'CURRENT_STATE');
    expect(state).toContain('Marco Bianchi LEADS Project Falcon (valid 2024-10-01T09:00Z → now)');
    expect(state).toContain('Project Falcon AUTH_PROVIDER Firebase (valid 2024-10-01T09:00Z → now)');
    expect(state).toContain('Priya Nair (person, person:priya) — location: Berlin; role: designer');
    expect(pack.text).not.toMatch(/Lena Ortiz LEADS|Supabase|Lisbon/);
  });

  it('has no CURRENT_STATE section when the query names no entity', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'how do we roll back a deploy?',
      budgetTokens: 400,
    });
    expect(pack.sections.map((s) => s.kind)).not.toContain('CURRENT_STATE');
  });

  it('anchors name entities too; an anchor the query asks nothing of is left to the other sections', async () => {
    const asked = await compile(gw, {
      namespaces: [NS],
      query: 'Who leads it, and which auth provider?',
      anchors: ['project:falcon'],
      budgetTokens: 400,
    });
    const state = texts(asked, 'CURRENT_STATE');
    // Both answer; the one matching more of the question's words ("auth", "provider") first.
    expect(state[0]).toBe('Project Falcon AUTH_PROVIDER Supabase (valid 2024-10-10T09:00Z → now)');
    expect(state).toContain('Lena Ortiz LEADS Project Falcon (valid 2024-10-08T09:00Z → now)');
    const briefing = await compile(gw, {
      namespaces: [NS],
      anchors: ['project:falcon'],
      strategy: 'BRIEFING',
    });
    expect(briefing.sections.map((s) => s.kind)).not.toContain('CURRENT_STATE');
  });

  it('a query naming an entity without asking anything of it gets an overview of what holds', async () => {
    const pack = await compile(gw, { namespaces: [NS], query: 'Project Falcon', budgetTokens: 400 });
    const state = texts(pack, 'CURRENT_STATE');
    expect(state).toEqual(
      expect.arrayContaining([
        'Lena Ortiz LEADS Project Falcon (valid 2024-10-08T09:00Z → now)',
        'Project Falcon AUTH_PROVIDER Supabase (valid 2024-10-10T09:00Z → now)',
      ]),
    );
    expect(state.some((t) => t.startsWith('[history') || t.includes('LINKS_TO'))).toBe(false);
  });
});

describe('contradictions: single-valued predicates, set per namespace', () => {
  let gw: TestGateway;
  const ns = 'cardinality';
  const livesIn = (id: string, occurredAt: string, city: string) => ({
    ...message(id, occurredAt, `Priya lives in ${city} now.`),
    assertions: [
      { entity: { key: `city:${city.toLowerCase()}`, kind: 'city', title: city } },
      { fact: { subject: 'person:priya', predicate: 'LIVES_IN', object: `city:${city.toLowerCase()}` } },
    ],
  });
  const facts = async () => {
    const res = await gw.gql<{
      entity: {
        facts: { edges: { node: { object: { key: string }; status: string; conflict: boolean } }[] };
      };
    }>(
      `query { entity(namespace: "${ns}", key: "person:priya") {
         facts(predicates: ["LIVES_IN"]) { edges { node { object { key } status conflict } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    return res.data!.entity.facts.edges.map((e) => e.node);
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    await upsertEntities(gw, ns, [{ key: 'person:priya', kind: 'person', title: 'Priya Nair' }]);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('by default a predicate holds many values: two cities are both in force, no conflict', async () => {
    await recordObservations(gw, 'cardinality-many', [
      livesIn('a1', '2024-10-01T09:00:00Z', 'Berlin'),
      livesIn('a2', '2024-10-12T09:00:00Z', 'Lisbon'),
    ]);
    const many = await gw.gql<{
      entity: { facts: { edges: { node: { status: string; conflict: boolean } }[] } };
    }>(
      `query { entity(namespace: "cardinality-many", key: "person:priya") {
         facts(predicates: ["LIVES_IN"]) { edges { node { status conflict } } } } }`,
    );
    expect(many.data!.entity.facts.edges.map((e) => e.node)).toEqual([
      { status: 'ACTIVE', conflict: false },
      { status: 'ACTIVE', conflict: false },
    ]);
    const res = await gw.gql<{ setPredicateCardinality: unknown }>(
      `mutation { setPredicateCardinality(namespace: "${ns}", predicate: "LIVES_IN", cardinality: "ONE") }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.setPredicateCardinality).toEqual({
      status: 'UPDATED',
      namespace: ns,
      predicate: 'LIVES_IN',
      cardinality: 'ONE',
      singleValuedPredicates: ['LIVES_IN'],
    });
    const bad = await gw.gql(
      `mutation { setPredicateCardinality(namespace: "${ns}", predicate: "LIVES_IN", cardinality: "SOME") }`,
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('ONE: overlapping values without a supersession are an open conflict, served as one', async () => {
    await recordObservations(gw, ns, [
      livesIn('p1', '2024-10-01T09:00:00Z', 'Berlin'),
      livesIn('p2', '2024-10-12T09:00:00Z', 'Lisbon'),
    ]);
    expect(await facts()).toEqual(
      expect.arrayContaining([
        { object: { key: 'city:berlin' }, status: 'ACTIVE', conflict: true },
        { object: { key: 'city:lisbon' }, status: 'ACTIVE', conflict: true },
      ]),
    );
    const pack = await compile(gw, { namespaces: [ns], query: 'Where does Priya live?', budgetTokens: 400 });
    const state = texts(pack, 'CURRENT_STATE').filter((t) => t.includes('LIVES_IN'));
    expect(state).toHaveLength(2);
    expect(state.every((t) => t.endsWith('[CONFLICT: another version is also served]'))).toBe(true);
    expect(pack.conflicts).toHaveLength(2);
    expect(pack.warnings.some((w) => w.startsWith('open_conflict: 2 fact(s)'))).toBe(true);
  });

  it('MANY again lifts the rule for later writes; the settings list what is single-valued', async () => {
    const res = await gw.gql<{ setPredicateCardinality: { singleValuedPredicates: string[] } }>(
      `mutation { setPredicateCardinality(namespace: "${ns}", predicate: "LIVES_IN", cardinality: "MANY") }`,
    );
    expect(res.data!.setPredicateCardinality.singleValuedPredicates).toEqual([]);
  });
});
