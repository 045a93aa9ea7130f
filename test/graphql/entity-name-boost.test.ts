import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { allItems, compile, readTrace, recordObservations, upsertEntities } from '../helpers/seed-context.js';

// A query that names an entity (by title, alias or key — the gazetteer of entity linking)
// lifts the observations linked to it, and says so in the hit's and the item's signals.

const NS = 'entity-boost';

const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) {
      hits {
        score rrf exactIdBonus entityBonus
        chunk { text }
        signals { rrf exactId entity entities label terms asking }
      }
    }
  }
`;

interface Hit {
  score: number;
  rrf: number;
  exactIdBonus: number;
  entityBonus: number;
  chunk: { text: string };
  signals: {
    rrf: number;
    exactId: number;
    entity: number;
    entities: string[];
    label: number;
    terms: number;
    asking: number;
  };
}

const message = (id: string, content: string, actor: string, minute: number) => ({
  source: { system: 'chat', stream: `thread-${id}`, externalId: id },
  kind: 'message',
  occurredAt: new Date(Date.UTC(2024, 4, 1, 9, minute)).toISOString(),
  content,
  actor: { type: 'person', id: actor },
});

// Bob's message repeats the query's words, so on words alone it ranks first; Alice's is
// linked to her as its actor. The query names her by an alias the texts never contain.
const ALICE = 'Checklist for the deploy updated before the release.';
const BOB = 'Deploy checklist: the deploy checklist was updated for the release.';

describe('entity-name query boost', () => {
  let gw: TestGateway;
  const searchCounted = async (query: string) => {
    const res = await gw.gql<{ search: { hits: Hit[] } }>(SEARCH, {
      input: { namespaces: [NS], query, k: 5 },
    });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return { hits: res.data!.search.hits, statements: res.extensions?.sql?.statements ?? 0 };
  };
  const search = async (query: string) => (await searchCounted(query)).hits;

  beforeAll(async () => {
    gw = await startTestGateway();
    await upsertEntities(gw, NS, [{ key: 'alice', kind: 'person', title: 'Alice Moreau' }]);
    // Aliases come from vault imports; set here as such an import leaves them.
    await gw.db.query(`UPDATE entities SET aliases = '{"Ally"}' WHERE namespace = $1 AND key = 'alice'`, [
      NS,
    ]);
    await recordObservations(gw, NS, [message('a1', ALICE, 'alice', 1), message('b1', BOB, 'bob', 2)]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('without a name in the query, the words decide', async () => {
    const hits = await search('deploy checklist release');
    expect(hits[0]?.chunk.text).toContain(BOB);
    for (const h of hits) {
      expect(h.entityBonus).toBe(0);
      expect(h.signals.entities).toEqual([]);
    }
  });

  it("a query naming Alice ranks Alice's observation first, the bonus shown in signals", async () => {
    const hits = await search('what did Ally say about the deploy checklist release');
    const [first, second] = hits;
    expect(first?.chunk.text).toContain(ALICE);
    expect(first!.entityBonus).toBeCloseTo(0.004, 12);
    expect(first!.signals.entity).toBeCloseTo(0.004, 12);
    expect(first!.signals.entities).toEqual(['alice']);
    expect(first!.score).toBeCloseTo(
      first!.rrf +
        first!.exactIdBonus +
        first!.entityBonus +
        first!.signals.label +
        first!.signals.terms +
        first!.signals.asking,
      12,
    );
    // Bob's is found by more of the query's words, and carries no bonus.
    expect(second?.chunk.text).toContain(BOB);
    expect(second!.rrf).toBeGreaterThan(first!.rrf);
    expect(second!.signals.entity).toBe(0);
  });

  it('the title names her too, as whole words only', async () => {
    expect((await search('Alice Moreau deploy checklist release'))[0]?.chunk.text).toContain(ALICE);
    // "Malice" is not "Alice": no bonus.
    const hits = await search('malice deploy checklist release');
    expect(hits.every((h) => h.entityBonus === 0)).toBe(true);
  });

  it("costs no statement of its own: the links come with the hits' rows", async () => {
    const plain = await searchCounted('deploy checklist release');
    const named = await searchCounted('what did Ally say about the deploy checklist release');
    expect(named.hits[0]!.entityBonus).toBeGreaterThan(0);
    // vector, lexical; the hits' rows and the graph walk (which read the entities shown too).
    expect(named.statements).toBeLessThanOrEqual(4);
    expect(named.statements).toBe(plain.statements);
  });

  it('the context pack and its trace carry the same signal', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'what did Ally say about the deploy checklist release',
      strategy: 'HYBRID',
    });
    const items = allItems(pack).filter((i) => i.kind !== 'current');
    const alice = items.find((i) => i.text.includes(ALICE));
    const bob = items.find((i) => i.text.includes(BOB));
    expect(alice?.signals.entity).toBeCloseTo(0.004, 12);
    expect(alice?.signals.entities).toEqual(['alice']);
    expect(bob?.signals.entity).toBe(0);
    expect(alice!.score).toBeGreaterThan(bob!.score);
    const trace = await readTrace(gw, NS, pack.traceId);
    const decision = trace?.decisions.find((d) => d.id === alice!.id) as
      | { signals?: { entity?: number; entities?: string[] } }
      | undefined;
    expect(decision?.signals?.entity).toBeCloseTo(0.004, 12);
    expect(decision?.signals?.entities).toEqual(['alice']);
  });
});
