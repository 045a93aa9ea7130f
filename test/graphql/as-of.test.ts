import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGlobalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { sumOfSignals } from '../helpers/score-signals.js';
import {
  type Pack,
  allItems,
  assertFacts,
  compile,
  recordObservations,
  retainDocuments,
  section,
  servedFacts,
} from '../helpers/seed-context.js';

// `asOf` on every read kind, through `context` and `search`: what memory held at that instant.
// Observations by their occurredAt, chunks and documents by when they were written, facts valid
// then whose evidence was there then (an end after asOf is not shown); plus the freshness rules
// (document links carry none; a newer message on the same topic outranks an older one).

const NS = 'asof';
const MARCH = '2024-03-15T00:00:00Z';
const JUNE = '2024-06-15T00:00:00Z';

const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) {
      hits { chunk { text kind node { key } } }
      neighbors { entity { key } via { predicate } }
    }
  }
`;

interface SearchResult {
  hits: { chunk: { text: string; kind: string; node: { key: string } } }[];
  neighbors: { entity: { key: string }; via: { predicate: string } }[];
}

const texts = (pack: Pack) => allItems(pack).map((i) => i.text);

describe('asOf: what memory held at an instant', () => {
  let gw: TestGateway;
  let before: Date;
  let afterWrites: Date;

  async function search(input: Record<string, unknown>): Promise<SearchResult> {
    const res = await gw.gql<{ search: SearchResult }>(SEARCH, { input: { namespaces: [NS], ...input } });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return res.data!.search;
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    await recordObservations(gw, NS, [
      {
        source: { system: 'slack', stream: 'launch', externalId: 'a1' },
        kind: 'message',
        occurredAt: '2024-03-01T09:00:00Z',
        content: 'The zeppelin launch is planned for the spring; Carol owns the zeppelin rollout.',
        assertions: [
          { entity: { key: 'person:carol', kind: 'person', title: 'Carol' } },
          { entity: { key: 'project:zeppelin', kind: 'project', title: 'Zeppelin' } },
          {
            fact: {
              subject: 'person:carol',
              predicate: 'owns',
              object: 'project:zeppelin',
              validFrom: '2024-03-01T09:00:00Z',
              validTo: '2024-09-01T00:00:00Z',
            },
          },
        ],
      },
      {
        source: { system: 'slack', stream: 'launch', externalId: 'a2' },
        kind: 'message',
        occurredAt: '2024-05-10T09:00:00Z',
        content: 'Announcement: the zeppelin launch moved to the autumn, Dave leads the zeppelin now.',
        assertions: [
          { entity: { key: 'person:dave', kind: 'person', title: 'Dave' } },
          {
            fact: {
              subject: 'person:dave',
              predicate: 'advises',
              object: 'project:zeppelin',
              validFrom: '2024-01-01T00:00:00Z',
            },
          },
        ],
      },
    ]);
    before = new Date();
    await new Promise((r) => setTimeout(r, 20));
    await retainDocuments(gw, NS, [
      {
        key: 'doc:zeppelin-faq',
        title: 'Zeppelin FAQ',
        content: '# Zeppelin launch\nThe zeppelin launch checklist lives in this FAQ.',
        links: ['project:zeppelin'],
      },
    ]);
    // A review that will happen (occurredAt in 2030), valid from 2024: known only from then.
    await recordObservations(gw, NS, [
      {
        source: { system: 'slack', stream: 'launch', externalId: 'a3' },
        kind: 'message',
        occurredAt: '2030-01-01T00:00:00Z',
        content: 'Erin reviewed the zeppelin FAQ.',
        assertions: [
          { entity: { key: 'person:erin', kind: 'person', title: 'Erin' } },
          {
            fact: {
              subject: 'doc:zeppelin-faq',
              predicate: 'reviewed_by',
              object: 'person:erin',
              validFrom: '2024-01-01T00:00:00Z',
            },
          },
        ],
      },
    ]);
    afterWrites = new Date();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('context: a March pack holds the March message, not the May announcement', async () => {
    const march = await compile(gw, { namespaces: [NS], query: 'zeppelin launch', asOf: MARCH });
    expect(texts(march).some((t) => t.includes('planned for the spring'))).toBe(true);
    expect(texts(march).some((t) => t.includes('Announcement'))).toBe(false);
    const june = await compile(gw, { namespaces: [NS], query: 'zeppelin launch', asOf: JUNE });
    expect(texts(june).some((t) => t.includes('Announcement'))).toBe(true);
  });

  it('search: hits are observations that occurred by asOf', async () => {
    const march = await search({ query: 'zeppelin launch', asOf: MARCH, hops: 0 });
    const marchTexts = march.hits.map((h) => h.chunk.text);
    expect(marchTexts.some((t) => t.includes('planned for the spring'))).toBe(true);
    expect(marchTexts.some((t) => t.includes('Announcement'))).toBe(false);
    const now = await search({ query: 'zeppelin launch', hops: 0 });
    expect(now.hits.some((h) => h.chunk.text.includes('Announcement'))).toBe(true);
  });

  it('documents and their chunks appear only once written, in search and context', async () => {
    const isFaq = (t: string) => t.includes('checklist lives in this FAQ');
    const earlier = before.toISOString();
    const s = await search({ query: 'zeppelin checklist', asOf: earlier, hops: 0 });
    expect(s.hits.some((h) => isFaq(h.chunk.text))).toBe(false);
    const sNow = await search({ query: 'zeppelin checklist', hops: 0 });
    expect(sNow.hits.some((h) => isFaq(h.chunk.text))).toBe(true);
    const c = await compile(gw, { namespaces: [NS], query: 'zeppelin checklist', asOf: earlier });
    expect(texts(c).some(isFaq)).toBe(false);
    const cNow = await compile(gw, { namespaces: [NS], query: 'zeppelin checklist' });
    expect(texts(cNow).some(isFaq)).toBe(true);
  });

  it('facts: valid then, drawn from evidence held then, an end after asOf not shown', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      anchors: ['project:zeppelin'],
      strategy: 'GRAPH',
      asOf: MARCH,
    });
    const facts = servedFacts(pack).map((i) => i.text);
    // The end date (September) lies after asOf: in March the ownership read as open.
    expect(facts).toContain('Carol owns Zeppelin (valid 2024-03-01T09:00Z → now)');
    // Valid since January, but only known from the May message: not held in March.
    expect(facts.some((t) => t.startsWith('Dave advises'))).toBe(false);
    // The document link was written today: not held in March either.
    expect(facts.some((t) => t.includes('LINKS_TO'))).toBe(false);

    const june = servedFacts(
      await compile(gw, { namespaces: [NS], anchors: ['project:zeppelin'], strategy: 'GRAPH', asOf: JUNE }),
    ).map((i) => i.text);
    expect(june.some((t) => t.startsWith('Dave advises Zeppelin'))).toBe(true);
    // Without asOf the recorded end date shows.
    const now = servedFacts(
      await compile(gw, { namespaces: [NS], anchors: ['project:zeppelin'], strategy: 'GRAPH' }),
    ).map((i) => i.text);
    expect(now.some((t) => t.startsWith('Carol owns'))).toBe(false); // ended in September
  });

  it('search: graph neighbours come through facts held at asOf', async () => {
    const neighbours = async (asOf: Date) =>
      (await search({ query: 'zeppelin checklist FAQ', hops: 1, asOf: asOf.toISOString() })).neighbors.map(
        (n) => n.entity.key,
      );
    // The FAQ links to the project (written before afterWrites); Erin's review is known from 2030.
    const today = await neighbours(afterWrites);
    expect(today).toContain('project:zeppelin');
    expect(today).not.toContain('person:erin');
    expect(await neighbours(new Date('2030-06-01T00:00:00Z'))).toContain('person:erin');
  });

  it('a fact asserted directly is held from its validFrom (it has no other time)', async () => {
    const [id] = await assertFacts(gw, NS, [
      {
        subject: 'person:carol',
        predicate: 'mentors',
        object: 'person:dave',
        validFrom: '2024-02-01T00:00:00Z',
      },
    ]);
    const at = async (asOf: string) =>
      servedFacts(
        await compile(gw, { namespaces: [NS], anchors: ['person:carol'], strategy: 'GRAPH', asOf }),
      ).map((i) => parseGlobalId(i.id)?.parts[1]);
    expect(await at(MARCH)).toContain(id);
    expect(await at('2024-01-15T00:00:00Z')).not.toContain(id);
  });
});

describe('freshness', () => {
  let gw: TestGateway;
  const FRESH = 'fresh';

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a document link carries no freshness bonus from its write time', async () => {
    await recordObservations(gw, FRESH, [
      {
        source: { system: 'slack', externalId: 'f1' },
        kind: 'message',
        occurredAt: new Date(Date.now() - 3_600_000).toISOString(),
        content: 'The billing service owns invoice rendering.',
        assertions: [{ entity: { key: 'service:billing', kind: 'service', title: 'Billing' } }],
      },
    ]);
    await retainDocuments(gw, FRESH, [
      {
        key: 'doc:billing',
        title: 'Billing notes',
        content: 'Billing renders invoices.',
        links: ['service:billing'],
      },
    ]);
    const pack = await compile(gw, {
      namespaces: [FRESH],
      anchors: ['service:billing'],
      query: 'billing invoices',
    });
    const link = servedFacts(pack).find((i) => i.text.includes('LINKS_TO'));
    expect(link).toBeDefined();
    expect(link!.signals.freshness).toBe(0);
  });

  it('a newer message on the same topic outranks older ones and survives a tight budget', async () => {
    const at = (minutes: number) =>
      new Date(Date.parse('2024-05-01T09:00:00Z') + minutes * 60_000).toISOString();
    await recordObservations(gw, FRESH, [
      {
        source: { system: 'slack', stream: 'incidents', externalId: 'i1' },
        kind: 'message',
        occurredAt: at(0),
        content: 'ATL-142: the replica lags 40s behind the primary, checkout reads are stale.',
      },
      {
        source: { system: 'slack', stream: 'incidents', externalId: 'i2' },
        kind: 'message',
        occurredAt: at(30),
        content: 'ATL-142 update: replica still lags 40s, we are looking at the replica disk.',
      },
      {
        source: { system: 'slack', stream: 'incidents', externalId: 'i3' },
        kind: 'message',
        occurredAt: at(90),
        content: 'ATL-142 resolved: replica caught up after the disk swap.',
      },
    ]);
    const pack = await compile(gw, {
      namespaces: [FRESH],
      query: 'ATL-142 replica lag',
      budgetTokens: 400,
      asOf: at(120),
    });
    const items = section(pack, 'RECENT_OBSERVATIONS');
    // The older two repeat the query's words more often; the newest word on ATL-142 comes first.
    expect(items[0]?.text).toContain('ATL-142 resolved');
    expect(items[0]!.signals.newer).toBeGreaterThan(0);
    const scores = items.map((i) => i.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // Scores only moved within the thread: the three together keep their sum.
    for (const i of items) {
      const r = i.signals;
      expect(i.score).toBeCloseTo(sumOfSignals(r), 12);
    }
    expect(items.reduce((n, i) => n + i.signals.newer, 0)).toBeCloseTo(0, 12);

    // A budget that holds only part of the thread keeps the newest message.
    const tight = await compile(gw, {
      namespaces: [FRESH],
      query: 'ATL-142 replica lag',
      budgetTokens: 60,
      asOf: at(120),
    });
    expect(texts(tight).some((t) => t.includes('ATL-142 resolved'))).toBe(true);
    expect(texts(tight).filter((t) => t.includes('lags 40s')).length).toBeLessThan(2);
  });
});
