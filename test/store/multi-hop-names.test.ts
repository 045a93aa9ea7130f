import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multiHopCandidates } from '../../src/modules/retrieval/store/multi-hop-store.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { assertFacts, upsertEntities } from '../helpers/seed-context.js';

// Multi-hop expansion reads the facts around the entities a detected name names: a title that
// is the name, starts or ends with it (whole words, any case), or the key itself.

const NS = 'hop-names';
const TITLES: Record<string, string> = {
  'person:equal': 'Marguerite',
  'person:starts': 'Marguerite Duras',
  'person:ends': 'captain MARGUERITE',
  'org:middle': 'The Marguerite Prize',
  'place:substring': 'Margueriteville',
  'place:prefix': 'Margue',
};

describe('multi-hop: the entities a name names', () => {
  let gw: TestGateway;
  const subjectsOf = new Map<string, string>();

  beforeAll(async () => {
    gw = await startTestGateway();
    await upsertEntities(gw, NS, [
      ...Object.entries(TITLES).map(([key, title]) => ({ key, kind: key.split(':')[0], title })),
      { key: 'marguerite', kind: 'topic', title: 'Unrelated title' },
      { key: 'team:hub', kind: 'team', title: 'Hub' },
    ]);
    const keys = [...Object.keys(TITLES), 'marguerite'];
    const ids = await assertFacts(
      gw,
      NS,
      keys.map((subject) => ({ subject, predicate: 'member_of', object: 'team:hub' })),
    );
    for (const [i, k] of keys.entries()) subjectsOf.set(ids[i]!, k);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const named = async (name: string) => {
    const { rows } = await multiHopCandidates(
      gw.db,
      {
        filter: {
          namespaces: [NS],
          visibleScopes: null,
          meta: null,
          kinds: null,
          excludeKinds: null,
          scopes: null,
          since: null,
          until: null,
          asOf: null,
        },
        names: [name],
        perName: 10,
        lexical: { k1: 1.2, b: 0.75, maxTerms: 64 },
        asOf: new Date(),
        scopes: null,
      },
      null,
      { asOf: new Date(), heldAt: null, queryVector: null, visibleScopes: null, scopes: null },
    );
    return rows
      .filter((r) => r.kind === 'fact')
      .map((r) => subjectsOf.get(r.id))
      .sort();
  };

  it('matches a title that is, starts or ends with the name in any case, and the key', async () => {
    expect(await named('Marguerite')).toEqual(['marguerite', 'person:ends', 'person:equal', 'person:starts']);
  });

  it('never a middle word, a longer word or a shorter one', async () => {
    expect(await named('Prize')).toEqual(['org:middle']);
    expect(await named('Margue')).toEqual(['place:prefix']);
    expect(await named('Duras')).toEqual(['person:starts']);
    expect(await named('Nobody')).toEqual([]);
  });
});
