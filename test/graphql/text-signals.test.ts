import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BONUS } from '../../src/modules/retrieval/pipeline/fusion.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { recordObservations } from '../helpers/seed-context.js';

// The label, own-terms and asking signals: a query naming a speaker prefers the turns that speaker
// wrote (the observation's title names its actor), and a turn that says the query's words
// itself gets more than a neighbour that is only indexed with them, and a turn that asks
// gives way to the one that answers. All three show in `signals`
// of search hits and of context items, and add up to the score.

const NS = 'text-signals';

const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) {
      hits {
        score rrf exactIdBonus entityBonus
        chunk { text title }
        signals { rrf label terms asking }
      }
    }
  }
`;

const CONTEXT = /* GraphQL */ `
  query Context($input: ContextInput!) {
    context(input: $input) {
      sections { kind items { text score signals { rrf label terms asking } } }
    }
  }
`;

interface Hit {
  score: number;
  rrf: number;
  exactIdBonus: number;
  entityBonus: number;
  chunk: { text: string; title: string | null };
  signals: { rrf: number; label: number; terms: number; asking: number };
}

// One session: Omar's answer comes after Dana's question, and Dana's last turn mentions printing.
const turn = (id: string, actor: string, content: string, second: number) => ({
  source: { system: 'chat', stream: 'trip', externalId: id },
  kind: 'message',
  occurredAt: new Date(Date.UTC(2024, 5, 3, 10, 0, second)).toISOString(),
  content,
  actor: { type: 'person', id: actor },
  data: { sessionId: 'trip:1' },
});
const QUESTION = 'Has anyone looked at the glacier photos from the hike?';
const ANSWER = 'Yes, the glacier photos from the hike look sharp and bright.';
const PRINT = 'Great, I will print the best ones for the office wall.';

describe('label and own-terms signals', () => {
  let gw: TestGateway;
  const search = async (query: string) => {
    const res = await gw.gql<{ search: { hits: Hit[] } }>(SEARCH, {
      input: { namespaces: [NS], query, k: 5 },
    });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return res.data!.search.hits;
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    await recordObservations(gw, NS, [
      turn('t1', 'dana', QUESTION, 1),
      turn('t2', 'omar', ANSWER, 2),
      turn('t3', 'dana', PRINT, 3),
    ]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a query naming a speaker gives that speaker’s turns the label bonus, shown in signals', async () => {
    const hits = await search('what did omar say about the glacier photos from the hike');
    const omar = hits.find((h) => h.chunk.text.includes(ANSWER));
    const dana = hits.find((h) => h.chunk.text.includes(QUESTION));
    expect(omar?.chunk.title).toContain('omar');
    expect(omar!.signals.label).toBeCloseTo(BONUS.labelMatch, 12);
    expect(dana!.signals.label).toBe(0);
    // Both texts hold the query's words; the label decides between them.
    expect(hits[0]?.chunk.text).toContain(ANSWER);
    for (const h of hits) {
      expect(h.score).toBeCloseTo(
        h.rrf + h.exactIdBonus + h.entityBonus + h.signals.label + h.signals.terms + h.signals.asking,
        12,
      );
    }
  });

  it('a neighbour found by the context index gets no own-terms bonus; the turn that says it does', async () => {
    const hits = await search('print');
    const said = hits.find((h) => h.chunk.text.includes(PRINT));
    const neighbour = hits.find((h) => h.chunk.text.includes(ANSWER));
    // Omar's answer is indexed with the next turn, so "print" finds it too.
    expect(neighbour).toBeDefined();
    expect(said!.signals.terms).toBeGreaterThan(0);
    expect(said!.signals.terms).toBeLessThanOrEqual(BONUS.ownTermsMax + 1e-12);
    expect(neighbour!.signals.terms).toBe(0);
    expect(hits[0]?.chunk.text).toContain(PRINT);
  });

  it('a turn that asks gives way to the turn that answers', async () => {
    const hits = await search('glacier photos hike');
    const question = hits.find((h) => h.chunk.text.includes(QUESTION));
    const answer = hits.find((h) => h.chunk.text.includes(ANSWER));
    expect(question!.signals.asking).toBeCloseTo(-BONUS.askingPenalty, 12);
    expect(answer!.signals.asking).toBe(0);
    expect(hits.indexOf(answer!)).toBeGreaterThanOrEqual(0);
    expect(hits.indexOf(answer!)).toBeLessThan(hits.indexOf(question!));
  });

  it('context items carry the same signals', async () => {
    const res = await gw.gql<{
      context: {
        sections: { kind: string; items: { text: string; score: number; signals: Hit['signals'] }[] }[];
      };
    }>(CONTEXT, {
      input: {
        namespaces: [NS],
        query: 'what did omar say about the glacier photos from the hike',
        strategy: 'HYBRID',
      },
    });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const items = res.data!.context.sections.flatMap((s) => s.items);
    const omar = items.find((i) => i.text.includes(ANSWER));
    const dana = items.find((i) => i.text.includes(QUESTION));
    expect(omar?.signals.label).toBeCloseTo(BONUS.labelMatch, 12);
    expect(omar!.signals.terms).toBeGreaterThan(0);
    expect(dana?.signals.label).toBe(0);
    expect(dana?.signals.asking).toBeCloseTo(-BONUS.askingPenalty, 12);
  });
});
