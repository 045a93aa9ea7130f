import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  at,
  seedChunks,
  seedEntities,
  seedFacts,
  seedObservations,
  seedVersions,
} from '../helpers/seed-graph.js';

const NS = 'nplus1';
const PEOPLE = 50;

/**
 * Resolving N children costs one statement per nesting level, not N: the same query over 2
 * and over 50 entities must cost exactly the same number of SQL statements.
 */
describe('graph reads: SQL statements per request do not grow with the number of parents', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    // The widest query below asks every relation of 50 entities at once: past the default cost
    // limit (estimated objects), which is not what this file measures.
    gw = await startTestGateway({ MEMGATE_MAX_COST: '1000000' });
    const pad = (i: number) => String(i).padStart(2, '0');
    const people = Array.from({ length: PEOPLE }, (_, i) => `p${pad(i)}`);
    await seedEntities(gw.db, NS, [
      ...people.map((key) => ({ key, kind: 'person' })),
      ...people.flatMap((p) => [0, 1, 2].map((j) => ({ key: `${p}-proj${j}`, kind: 'project' }))),
      ...[0, 1, 2, 3, 4].map((k) => ({ key: `org${k}`, kind: 'org' })),
    ]);
    const observations = await seedObservations(
      gw.db,
      NS,
      people.flatMap((p, i) =>
        [0, 1].map((j) => ({
          system: 'tracker',
          externalId: `${p}-${j}`,
          kind: 'assignment',
          occurredAt: at(`2024-0${j + 1}-${pad((i % 27) + 1)}T00:00:00Z`),
          mentions: [p, ...(j === 0 ? [{ key: `${p}-proj0`, role: 'episode' }] : [])],
        })),
      ),
    );
    await seedFacts(
      gw.db,
      NS,
      people.flatMap((p, i) =>
        [0, 1, 2].map((j) => ({
          subject: p,
          predicate: j === 2 ? 'knows' : 'works_on',
          object: j === 2 ? people[(i + 1) % PEOPLE]! : `${p}-proj${j}`,
          validFrom: at(`2023-0${j + 1}-01T00:00:00Z`),
          observationIds: [observations[i * 2]!, observations[i * 2 + 1]!],
        })),
      ),
    );
    await seedFacts(
      gw.db,
      NS,
      people.flatMap((p, i) =>
        [0, 1].map((j) => ({
          subject: `${p}-proj${j}`,
          predicate: 'part_of',
          object: `org${(i + j) % 5}`,
          validFrom: at('2022-01-01T00:00:00Z'),
        })),
      ),
    );
    await seedVersions(
      gw.db,
      NS,
      people.map((key) => ({ key, validFrom: at('2023-01-01T00:00:00Z'), attributes: { level: 1 } })),
    );
    await seedChunks(
      gw.db,
      NS,
      people.flatMap((p) => [0, 1].map((order) => ({ nodeKey: p, order, text: `${p} note ${order}` }))),
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  const run = async (query: string, n: number) => {
    const res = await gw.gql<{ entities: { edges: unknown[] } }>(query, { ns: NS, n });
    expect(res.errors).toBeUndefined();
    expect(res.data!.entities.edges).toHaveLength(n);
    return res.extensions!.sql!.statements;
  };

  it('entities → facts → object and observations: 4 statements for 2 entities and for 50', async () => {
    const query = `query($ns: String!, $n: Int!) {
      entities(namespace: $ns, kinds: ["person"], first: $n) {
        edges { node { key
          facts(first: 5, direction: OUT, predicates: ["works_on"]) { edges { node {
            predicate
            object { key title }
            observations { observationId kind }
          } } }
        } }
      }
    }`;
    const two = await run(query, 2);
    const fifty = await run(query, PEOPLE);
    // The entities page (no count: totalCount is not selected), facts of the entities, the
    // facts' objects, their observations.
    expect(two).toBe(4);
    expect(fifty).toBe(two);
  });

  it('every relation of Entity and Observation in one query stays constant', async () => {
    const query = `query($ns: String!, $n: Int!) {
      entities(namespace: $ns, kinds: ["person"], first: $n) {
        edges { node {
          key
          attributes(asOf: "2024-01-01T00:00:00Z")
          facts(first: 2, predicates: ["works_on"], asOf: "2024-01-01T00:00:00Z") {
            totalCount
            edges { node { object { key } subject { key } supersededBy { factId }
              observations { observationId facts { factId } episodes { key } } } }
          }
          neighbors(hops: 2, limit: 5) { distance entity { key } via { factId } through { key } }
          chunks(first: 1) { totalCount edges { node { text observation { kind } } } }
          observations(first: 1) { totalCount edges { node { kind } } }
        } }
      }
    }`;
    // Relations here share entities (a neighbour can be a fact's object), so on a concurrent
    // backend one loader may find in cache what another already fetched: the count can only
    // drop below the bound, never rise with the number of entities.
    for (const n of [2, PEOPLE, 2, PEOPLE]) {
      // The page and its count, then one each for attributes, facts, their count, objects,
      // observations, Observation.facts, episode keys, neighbours, their entities, their facts,
      // chunks, their count, observations, their count (15 measured on PGlite; subjects and
      // episodes come from loader caches).
      expect(await run(query, n)).toBeLessThanOrEqual(16);
    }
  });

  it('a 3-level exploration (person → facts → project → facts → org) stays constant', async () => {
    // Objects at each level are of kinds the list does not hold, so no level is served from the
    // entities the list primed (which would only lower the count for the larger list).
    const query = `query($ns: String!, $n: Int!) {
      entities(namespace: $ns, kinds: ["person"], first: $n) {
        edges { node { key
          facts(first: 3, predicates: ["works_on"], direction: OUT) { edges { node { object {
            key
            facts(first: 3, direction: OUT) { edges { node { predicate object { key kind } } } }
          } } } }
        } }
      }
    }`;
    const two = await run(query, 2);
    const fifty = await run(query, PEOPLE);
    expect(fifty).toBe(two);
    // The page, then facts and objects at each of the two levels.
    expect(two).toBe(5);
  });
});
