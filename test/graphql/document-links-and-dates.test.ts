import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  allItems,
  assertFacts,
  compile,
  retainDocuments,
  section,
  upsertEntities,
} from '../helpers/seed-context.js';

// Document links are structure: they never crowd out the facts that say something about an
// entity. A back-filled document carries its date: asOf reads see it, and its links hold, from
// then on.

const NS = 'doc-links';

describe('documents: links in their place, dates of back-filled documents', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
    await upsertEntities(gw, NS, [
      { key: 'project:orca', kind: 'project', title: 'Orca' },
      { key: 'person:ines', kind: 'person', title: 'Ines' },
      { key: 'team:data', kind: 'team', title: 'Data team' },
    ]);
    await assertFacts(gw, NS, [
      {
        subject: 'person:ines',
        predicate: 'LEADS',
        object: 'project:orca',
        validFrom: '2024-01-01T00:00:00Z',
      },
      {
        subject: 'project:orca',
        predicate: 'OWNED_BY',
        object: 'team:data',
        validFrom: '2024-01-01T00:00:00Z',
      },
    ]);
    // Thirty documents link to the project, all written after its facts.
    await retainDocuments(
      gw,
      NS,
      Array.from({ length: 30 }, (_, i) => ({
        key: `doc:orca-note-${i}`,
        title: `Orca note ${i}`,
        content: `Meeting note ${i} about the Orca pipeline.`,
        links: ['project:orca'],
      })),
    );
    await retainDocuments(gw, NS, [
      {
        key: 'doc:orca-charter',
        title: 'Orca charter',
        content: 'The Orca charter: a columnar store for the sales analytics, owned by the data team.',
        links: ['team:data'],
        occurredAt: '2023-06-01T00:00:00Z',
      },
    ]);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('facts around an anchor come before its document links, however many links there are', async () => {
    const pack = await compile(gw, { namespaces: [NS], anchors: ['project:orca'], strategy: 'GRAPH' });
    const facts = section(pack, 'RELEVANT_FACTS').map((i) => i.text);
    expect(facts.slice(0, 2).sort()).toEqual([
      'Ines LEADS Orca (valid 2024-01-01 → now)',
      'Orca OWNED_BY Data team (valid 2024-01-01 → now)',
    ]);
    expect(facts.slice(2).every((t) => t.includes('LINKS_TO'))).toBe(true);
  });

  it('a dated document is held from its date on, and so are its links', async () => {
    const texts = async (asOf: string) =>
      allItems(
        await compile(gw, {
          namespaces: [NS],
          query: 'Orca charter columnar store',
          budgetTokens: 2000,
          asOf,
        }),
      ).map((i) => i.text);
    expect((await texts('2023-07-01T00:00:00Z')).some((t) => t.includes('columnar store'))).toBe(true);
    expect((await texts('2023-05-01T00:00:00Z')).some((t) => t.includes('columnar store'))).toBe(false);
    const res = await gw.gql<{
      entity: { facts: { edges: { node: { predicate: string; validFrom: string } }[] } };
    }>(
      `query { entity(namespace: "${NS}", key: "doc:orca-charter") {
         facts(asOf: "2023-07-01T00:00:00Z") { edges { node { predicate validFrom } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.entity.facts.edges.map((e) => e.node)).toEqual([
      { predicate: 'LINKS_TO', validFrom: '2023-06-01T00:00:00.000Z' },
    ]);
  });
});
