import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

// A client that stamps a whole session with one time (a minute-resolution export, a batch sent
// "now"): the turns keep the order they arrived in — batch position, then later batches — in
// every read that orders by time.

const NS = 'arrival';
const AT = '2024-05-02T09:30:00.000Z';
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india'];

const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $items: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $items) { accepted results { key } }
  }
`;
const LIST = /* GraphQL */ `
  query List($ns: String!, $first: Int, $after: String) {
    observations(namespace: $ns, first: $first, after: $after) {
      edges { node { observationId content } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const TIMELINE = /* GraphQL */ `
  query Timeline($ns: String!, $first: Int, $after: String) {
    timeline(namespace: $ns, key: "falcon", first: $first, after: $after) {
      edges { node { kind observation { observationId } } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

interface Page<T> {
  edges: { node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

const turn = (word: string) => ({
  source: { system: 'chat', stream: 'standup', externalId: word },
  kind: 'message',
  occurredAt: AT,
  content: `Falcon ${word}`,
});

describe('turns with one timestamp keep the order they arrived in', () => {
  let gw: TestGateway;
  const arrived: string[] = [];

  const record = async (words: string[]) => {
    const res = await gw.gql<{ recordObservations: { accepted: number; results: { key: string }[] } }>(
      RECORD,
      {
        ns: NS,
        items: words.map(turn),
      },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.recordObservations.accepted).toBe(words.length);
    arrived.push(...res.data!.recordObservations.results.map((r) => r.key));
  };

  /** Every page of a connection, `first` at a time. */
  async function pages<T>(query: string, pick: (data: never) => Page<T>, first: number): Promise<T[]> {
    const out: T[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const res = await gw.gql(query, { ns: NS, first, after });
      expect(res.errors).toBeUndefined();
      const page = pick(res.data as never);
      out.push(...page.edges.map((e) => e.node));
      if (!page.pageInfo.hasNextPage) return out;
      after = page.pageInfo.endCursor;
    }
    throw new Error('the connection never ended');
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    const entity = await gw.gql(
      `mutation { upsertEntities(namespace: "${NS}", entities: [{ key: "falcon", kind: "project", title: "Falcon" }]) { accepted } }`,
    );
    expect(entity.errors).toBeUndefined();
    await record(WORDS.slice(0, 6));
    await record(WORDS.slice(6));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('observations list newest first: the last to arrive first, across pages', async () => {
    const listed = await pages<{ observationId: string }>(
      LIST,
      (d: { observations: Page<never> }) => d.observations,
      4,
    );
    expect(listed.map((o) => o.observationId)).toEqual([...arrived].reverse());
  });

  it("an entity's observations and its timeline follow arrival, across pages", async () => {
    const events = await pages<{ kind: string; observation: { observationId: string } | null }>(
      TIMELINE,
      (d: { timeline: Page<never> }) => d.timeline,
      4,
    );
    expect(events.map((e) => e.observation?.observationId)).toEqual(arrived);
    const res = await gw.gql<{ entity: { observations: Page<{ observationId: string }> } }>(
      `{ entity(namespace: "${NS}", key: "falcon") { observations(first: 20) { edges { node { observationId } } pageInfo { hasNextPage endCursor } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.entity.observations.edges.map((e) => e.node.observationId)).toEqual(
      [...arrived].reverse(),
    );
  });

  it('a turn is indexed with the turns that arrived just before and after it', async () => {
    const { rows } = await gw.db.query<{ searchText: string }>(
      'SELECT search_text AS "searchText" FROM chunks WHERE namespace = $1 AND observation_id = $2',
      [NS, arrived[3]],
    );
    // The default window lends a turn the two before it and the one after it.
    const lent = rows[0]!.searchText;
    for (const word of ['bravo', 'charlie', 'delta', 'echo']) expect(lent).toContain(word);
    for (const word of ['alpha', 'foxtrot', 'golf', 'hotel', 'india']) expect(lent).not.toContain(word);
  });

  it('a bulk import keeps the order of its input too', async () => {
    const words = ['kilo', 'lima', 'mike', 'november', 'oscar', 'papa'];
    const res = await gw.gql<{ importObservations: { accepted: number; results: { key: string }[] } }>(
      `mutation($ns: String!, $o: [ObservationInput!]!) { importObservations(namespace: $ns, observations: $o) { accepted results { key } } }`,
      { ns: 'arrival-bulk', o: words.map(turn) },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.importObservations.accepted).toBe(words.length);
    const imported = res.data!.importObservations.results.map((r) => r.key);
    const listed = await gw.gql<{ observations: Page<{ observationId: string }> }>(LIST, {
      ns: 'arrival-bulk',
      first: 10,
    });
    expect(listed.data!.observations.edges.map((e) => e.node.observationId)).toEqual([...imported].reverse());
  });

  it('a cursor whose arrival part is not a number is refused as bad input', async () => {
    const forged = Buffer.from(JSON.stringify(['c1', '1714642200000000', 'obs-not-a-number'])).toString(
      'base64url',
    );
    const res = await gw.gql(LIST, { ns: NS, first: 2, after: forged });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
