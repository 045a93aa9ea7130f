import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  RECORD,
  REGISTER,
  TEAM_PACK,
  entityWithFacts,
  factsOf,
  message,
  setUpTeamNamespace,
} from './extraction-fixture.js';

const NS = 'extraction-rules';

describe('rule extraction: domain-pack extractors turn plain messages into EXTRACTED facts at write time', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
    await setUpTeamNamespace(gw, NS);
    const upsert = await gw.gql(
      `mutation($ns: String!) { upsertEntities(namespace: $ns, entities: [
        { key: "alice", kind: "person", title: "Alice Martin" },
        { key: "phoenix", kind: "project", title: "Phoenix" }
      ]) { accepted } }`,
      { ns: NS },
    );
    expect(upsert.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a message naming a relation becomes a fact citing the observation and the matched span', async () => {
    const text = 'Quick update: Alice Martin leads Phoenix from Monday.';
    const res = await gw.gql<{ recordObservations: { results: { key: string; status: string }[] } }>(RECORD, {
      ns: NS,
      items: [message('standup', text)],
    });
    expect(res.errors).toBeUndefined();
    const observationId = res.data!.recordObservations.results[0]!.key;
    const facts = await factsOf(gw, NS, 'alice');
    const leads = facts.find((f) => f.predicate === 'leads');
    expect(leads).toMatchObject({
      evidence: 'EXTRACTED',
      confidence: 0.8,
      object: { key: 'phoenix' },
      observations: [{ observationId }],
    });
    const span = leads!.attributes.learned!.span as [number, number];
    expect(text.slice(span[0], span[1])).toBe('Alice Martin leads Phoenix');
    expect(leads!.attributes.learned).toMatchObject({
      by: 'rule',
      extractor: 'leads-en',
      pack: 'team@1.0.0',
    });
  });

  it('an unknown name becomes a placeholder of the extractor kind, and the next mention lands on it', async () => {
    await gw.gql(RECORD, {
      ns: NS,
      items: [message('standup', 'Bruno works on Atlas.'), message('standup', 'Carla works on Atlas too.')],
    });
    const bruno = await factsOf(gw, NS, 'person:bruno');
    expect(bruno.map((f) => [f.predicate, f.object.key])).toEqual([['works_on', 'project:atlas']]);
    expect(bruno[0]!.object).toMatchObject({ kind: 'project', placeholder: true, title: 'Atlas' });
    const carla = await factsOf(gw, NS, 'person:carla');
    expect(carla[0]!.object.key).toBe('project:atlas');
    const entity = await entityWithFacts(gw, NS, 'person:bruno');
    expect(entity).toMatchObject({ kind: 'person', placeholder: true, title: 'Bruno' });
  });

  it('Russian text is read by its own extractor and resolved through titles', async () => {
    await gw.gql(
      `mutation($ns: String!) { upsertEntities(namespace: $ns, entities: [
        { key: "boris", kind: "person", title: "Борис Петров" }]) { accepted } }`,
      { ns: NS },
    );
    await gw.gql(RECORD, {
      ns: NS,
      items: [message('planning', 'Борис Петров теперь руководит проектом Феникс.')],
    });
    const facts = await factsOf(gw, NS, 'boris');
    expect(facts.map((f) => [f.predicate, f.object.key, f.evidence])).toEqual([
      ['leads', 'project:феникс', 'EXTRACTED'],
    ]);
  });

  it('the same statement in a later message reinforces the fact instead of adding an edge', async () => {
    await gw.gql(RECORD, { ns: NS, items: [message('standup', 'Reminder: Alice Martin leads Phoenix.')] });
    const leads = (await factsOf(gw, NS, 'alice')).filter((f) => f.predicate === 'leads');
    expect(leads).toHaveLength(1);
    expect(leads[0]!.observations).toHaveLength(2);
  });

  it('an ASSERTED fact keeps its class when a rule reads the same statement', async () => {
    await gw.gql(
      `mutation($ns: String!) { assertFacts(namespace: $ns, facts: [
        { subject: "alice", predicate: "works_on", object: "phoenix" }]) { accepted } }`,
      { ns: NS },
    );
    await gw.gql(RECORD, { ns: NS, items: [message('standup', 'Alice works on Phoenix, as always.')] });
    const worksOn = (await factsOf(gw, NS, 'alice')).filter((f) => f.predicate === 'works_on');
    expect(worksOn.map((f) => f.evidence)).toEqual(['ASSERTED']);
  });

  it('attribute extractors fill attributes the entity lacks and never overwrite asserted ones', async () => {
    await gw.gql(
      `mutation($ns: String!) { upsertEntities(namespace: $ns, entities: [
        { key: "dana", kind: "person", title: "Dana", attributes: { role: "designer" } }]) { accepted } }`,
      { ns: NS },
    );
    await gw.gql(RECORD, {
      ns: NS,
      items: [message('hr', "Dana's role is engineer."), message('hr', "Bruno's role is tech lead.")],
    });
    expect((await entityWithFacts(gw, NS, 'dana'))!.attributes).toMatchObject({ role: 'designer' });
    expect((await entityWithFacts(gw, NS, 'person:bruno'))!.attributes).toMatchObject({ role: 'tech lead' });
  });

  it('facts are scoped like the observation they were read from', async () => {
    await gw.gql(RECORD, {
      ns: NS,
      items: [message('secret', 'Erik works on Nebula.', 'erik', { scopes: ['workspace:ops'] })],
    });
    const facts = await factsOf(gw, NS, 'person:erik');
    expect(facts[0]!.scopes).toEqual(['workspace:ops']);
  });

  it('strict mode writes only relations the packs declare', async () => {
    const strictPack = {
      ...TEAM_PACK,
      name: 'team-strict',
      relations: TEAM_PACK.relations.filter((r) => r.relation !== 'uses'),
    };
    expect((await gw.gql(REGISTER, { pack: strictPack })).errors).toBeUndefined();
    await gw.gql(
      `mutation { configureNamespace(namespace: "extraction-strict", packs: ["team-strict@1.0.0"], strict: true) }`,
    );
    const res = await gw.gql<{ recordObservations: { accepted: number } }>(RECORD, {
      ns: 'extraction-strict',
      items: [message('s', 'Falcon uses Stripe. Gina works on Falcon.')],
    });
    expect(res.data!.recordObservations.accepted).toBe(1);
    expect(await factsOf(gw, 'extraction-strict', 'project:falcon')).toEqual([]);
    expect((await factsOf(gw, 'extraction-strict', 'person:gina')).map((f) => f.predicate)).toEqual([
      'works_on',
    ]);
  });

  it('documents are read too: facts carry the document path, scopes follow the document', async () => {
    const res = await gw.gql(
      `mutation($ns: String!, $docs: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $docs) { accepted } }`,
      {
        ns: NS,
        docs: [
          {
            key: 'doc:roadmap',
            title: 'Roadmap',
            content: '# Owners\n\nHanna works on Helios.\n\n# Vendors\n\nHelios uses Twilio.',
            sourcePath: 'wiki/roadmap.md',
            scopes: ['workspace:planning'],
          },
        ],
      },
    );
    expect(res.errors).toBeUndefined();
    const hanna = await factsOf(gw, NS, 'person:hanna');
    expect(hanna.map((f) => [f.predicate, f.object.key, f.evidence, f.scopes, f.sourcePath])).toEqual([
      ['works_on', 'project:helios', 'EXTRACTED', ['workspace:planning'], 'wiki/roadmap.md'],
    ]);
    expect((await factsOf(gw, NS, 'project:helios')).map((f) => f.object.key)).toEqual(['vendor:twilio']);
  });

  it('a namespace without extractors gets no facts from text', async () => {
    await gw.gql(RECORD, { ns: 'extraction-none', items: [message('x', 'Alice Martin leads Phoenix.')] });
    const { rows } = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM facts WHERE namespace = 'extraction-none'`,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('registration refuses an extractor without its named groups or with a catastrophic pattern', async () => {
    const bad = (extractor: Record<string, unknown>) =>
      gw.gql(REGISTER, {
        pack: {
          name: 'bad-extractors',
          version: '1.0.0',
          kinds: [{ kind: 'thing' }],
          extractors: [extractor],
        },
      });
    const noObject = await bad({
      name: 'x',
      pattern: '(?<subject>\\w{1,9}) likes',
      predicate: 'likes',
      subjectKind: 'thing',
    });
    expect(noObject.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(noObject.errors?.[0]?.message).toContain('(?<object>');
    // The linear-time engine runs nested quantifiers safely; what it cannot run is refused.
    const nested = await bad({
      name: 'x',
      pattern: '(?<subject>(a)\\1) is (?<object>b)',
      predicate: 'is',
      subjectKind: 'thing',
    });
    expect(nested.errors?.[0]?.message).toMatch(/backreference|rejected/);
  });
});
