import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * A write may carry only visibility scopes its principal holds. alice holds `workspace:wa` and
 * `principal:alice`; every kind of write that names `principal:bob` or `workspace:other` is
 * refused item by item (FORBIDDEN, nothing written), so she cannot squat keys nobody else could
 * then use; `scopes: ["*"]` may assign any.
 */
const NS = 'assign';
const PAYLOAD = 'accepted rejected results { index status code message }';
const ALICE = ['workspace:wa', 'principal:alice'];

interface Payload {
  accepted: number;
  rejected: number;
  results: { index: number; status: string; code: string | null; message: string | null }[];
}

const WRITES: Record<string, (scopes: string[], n: number) => [string, Record<string, unknown>]> = {
  entities: (scopes, n) => [
    `mutation($v: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $v) { ${PAYLOAD} } }`,
    { v: [{ key: `ent-${n}`, kind: 'person', scopes }] },
  ],
  observations: (scopes, n) => [
    `mutation($v: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $v) { ${PAYLOAD} } }`,
    {
      v: [
        {
          source: { system: 'mail', externalId: `m-${n}` },
          kind: 'email',
          occurredAt: '2024-01-01T00:00:00Z',
          content: 'hi',
          scopes,
        },
      ],
    },
  ],
  facts: (scopes, n) => [
    `mutation($v: [FactInput!]!) { assertFacts(namespace: "${NS}", facts: $v) { ${PAYLOAD} } }`,
    { v: [{ subject: `s-${n}`, predicate: 'knows', object: `o-${n}`, scopes }] },
  ],
  documents: (scopes, n) => [
    `mutation($v: [DocumentInput!]!) { retainDocuments(namespace: "${NS}", documents: $v) { ${PAYLOAD} } }`,
    { v: [{ key: `doc:${n}`, title: 'Doc', content: '# Doc\n\ntext', scopes }] },
  ],
};

describe('scope assignment: a write carries only scopes its principal holds', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  let n = 0;
  const next = () => {
    n += 1;
    return n;
  };
  const send = async (who: string, query: string, variables: Record<string, unknown>) => {
    const res = await gw.gql<Record<string, Payload>>(query, variables, { token: tokens[who] });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return Object.values(res.data!)[0]!;
  };
  const rowsScoped = async (scope: string) =>
    (
      await gw.db.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM entities WHERE namespace = $1 AND $2 = ANY(scopes))
              + (SELECT count(*) FROM observations WHERE namespace = $1 AND $2 = ANY(scopes))
              + (SELECT count(*) FROM facts WHERE namespace = $1 AND $2 = ANY(scopes))
              + (SELECT count(*) FROM chunks WHERE namespace = $1 AND $2 = ANY(scopes)) AS n`,
        [NS, scope],
      )
    ).rows[0]!.n;

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'alice', read: [NS], write: [NS], scopes: ALICE },
      { id: 'bob', read: [NS], write: [NS], scopes: ['principal:bob'] },
      { id: 'all', read: [NS], write: [NS], scopes: ['*'] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it.each(Object.keys(WRITES))(
    '%s: scopes alice does not hold are refused, hers and relevance ones pass',
    async (kind) => {
      for (const scopes of [['principal:bob'], ['workspace:other'], ['workspace:wa', 'principal:bob']]) {
        const [query, variables] = WRITES[kind]!(scopes, next());
        const payload = await send('alice', query, variables);
        expect(payload.rejected).toBe(1);
        expect(payload.results[0]).toMatchObject({ status: 'REJECTED', code: 'FORBIDDEN' });
        expect(payload.results[0]!.message).toMatch(
          /You may not assign scope "(principal:bob|workspace:other)"/,
        );
      }
      for (const scopes of [[], ['principal:alice'], ALICE, ['workspace:wa', 'project:x']]) {
        const [query, variables] = WRITES[kind]!(scopes, next());
        expect((await send('alice', query, variables)).accepted).toBe(1);
      }
      expect(await rowsScoped('principal:bob')).toBe(0);
      expect(await rowsScoped('workspace:other')).toBe(0);
    },
  );

  it('an observation assertion with a scope alice does not hold is refused alone; the observation stays', async () => {
    const payload = await send(
      'alice',
      `mutation($v: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $v) {
         accepted partial results { status assertions { index status code } } } }`,
      {
        v: [
          {
            source: { system: 'mail', externalId: 'with-assertions' },
            kind: 'email',
            occurredAt: '2024-02-01T00:00:00Z',
            content: 'alice met bob',
            scopes: ['principal:alice'],
            assertions: [
              { entity: { key: 'bob-person', kind: 'person', scopes: ['principal:bob'] } },
              {
                fact: {
                  subject: 'alice-person',
                  predicate: 'met',
                  object: 'bob-person',
                  scopes: ['workspace:other'],
                },
              },
              { entity: { key: 'alice-person', kind: 'person' } },
            ],
          },
        ],
      },
    );
    const assertions = (
      payload.results[0] as unknown as { assertions: { status: string; code: string | null }[] }
    ).assertions;
    expect(assertions.map((a) => a.code ?? a.status)).toEqual(['FORBIDDEN', 'FORBIDDEN', 'APPLIED']);
    expect(await rowsScoped('principal:bob')).toBe(0);
    expect(await rowsScoped('workspace:other')).toBe(0);
  });

  it('a refused key stays free for the one who holds the scope; "*" may assign any scope', async () => {
    const [query, variables] = WRITES.entities!(['principal:bob'], 900);
    expect((await send('alice', query, variables)).rejected).toBe(1);
    expect((await send('bob', query, variables)).accepted).toBe(1);
    const [q2, v2] = WRITES.entities!(['workspace:other', 'principal:bob'], 901);
    expect((await send('all', q2, v2)).accepted).toBe(1);
  });
});
