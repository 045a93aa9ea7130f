import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { dumpScopedRows, dumpSize } from '../helpers/hidden-rows.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * Generated writes: principal A (`workspace:wa`) sends random mutations into a namespace that
 * holds rows of principal B (`principal:bob`) next to public ones. Targets are drawn from B's
 * keys, ids and source identities, public ones and absent ones, so every write meets hidden
 * rows by address and by collision. After each run a dump of every B-scoped row of every table
 * must equal the dump taken before the first: nothing of B's ever changes. No answer may be an
 * internal error or show B's marker.
 *
 * A's writes also assign scopes: its own (`workspace:wa`), relevance ones, and visibility scopes
 * it does not hold (B's, another workspace's). Those items are refused, so no row anywhere ever
 * gains a scope A does not hold: the rows carrying one stay exactly the ones B seeded.
 */

const NS = 'gen';
const BOB = ['principal:bob'];
const MARK = 'bobmark';
const PAYLOAD = 'accepted rejected results { index status id key code message }';
const RUNS = 40;

type Op = [query: string, variables: Record<string, unknown>];

const BOB_KEYS = ['b-ent', 'b-secret', 'doc:bob', 'b-crm'];
const PUBLIC_KEYS = ['p-1', 'p-2', 'p-3'];
const KEYS = [...BOB_KEYS, ...PUBLIC_KEYS, 'fresh-1', 'fresh-2'];
const PREDICATES = ['knows', 'owes', 'likes'];
const INSTANTS = ['2024-01-01T00:00:00Z', '2024-06-01T00:00:00Z'];
const A_SCOPES = [[], ['workspace:wa'], ['project:x']];
/** Visibility scopes A does not hold, alone and beside ones it does. */
const UNHELD = ['principal:bob', 'workspace:other'];
const UNHELD_SCOPES = [
  ['principal:bob'],
  ['workspace:other'],
  ['workspace:wa', 'principal:bob'],
  ['project:x', 'workspace:other'],
];

/** Every row of the namespace that carries a scope A does not hold, as table:id:visibility. */
async function rowsWithUnheldScopes(db: TestGateway['db']): Promise<string[]> {
  const { rows } = await db.query<{ row: string }>(
    `SELECT 'entities:' || key || ':' || visibility::text AS row FROM entities WHERE namespace = $1 AND visibility && $2::text[]
     UNION ALL SELECT 'facts:' || fact_id || ':' || visibility::text FROM facts WHERE namespace = $1 AND visibility && $2::text[]
     UNION ALL SELECT 'observations:' || observation_id || ':' || visibility::text FROM observations WHERE namespace = $1 AND visibility && $2::text[]
     UNION ALL SELECT 'chunks:' || chunk_id || ':' || visibility::text FROM chunks WHERE namespace = $1 AND visibility && $2::text[]
     ORDER BY 1`,
    [NS, UNHELD],
  );
  return rows.map((r) => r.row);
}

describe('generated writes as A never change a row of B', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  let baseline: Record<string, string[]>;
  let unheldBaseline: string[];
  const factIds: string[] = ['fact-000000000000000000000000'];
  const observationIds: string[] = ['obs-000000000000000000000000'];
  let snapshotClock = Date.parse('2025-01-01T00:00:00Z');

  const seed = async (query: string, variables: Record<string, unknown>) => {
    const res = await gw.gql<Record<string, { rejected: number; results: { key: string }[] }>>(
      query,
      { ns: NS, ...variables },
      { token: tokens.bob },
    );
    expect(res.errors).toBeUndefined();
    const payload = Object.values(res.data!)[0]!;
    expect(payload.rejected).toBe(0);
    return payload.results.map((r) => r.key);
  };

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'alice', read: [NS], write: [NS], scopes: ['workspace:wa'] },
      { id: 'bob', read: [NS], write: [NS], scopes: BOB },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    await seed(
      `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${PAYLOAD} } }`,
      {
        e: [
          { key: 'b-ent', kind: 'person', title: `B ${MARK}`, attributes: { code: MARK }, scopes: BOB },
          { key: 'b-secret', kind: 'person', title: `Secret ${MARK}`, scopes: BOB },
          ...PUBLIC_KEYS.map((key) => ({ key, kind: 'thing', title: `Public ${key}` })),
        ],
      },
    );
    const observations = await seed(
      `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { ${PAYLOAD} } }`,
      {
        o: [
          {
            source: { system: 'mail', externalId: 'b-1' },
            kind: 'email',
            occurredAt: '2024-01-02T00:00:00Z',
            content: `B mail ${MARK}`,
            scopes: BOB,
            assertions: [{ fact: { subject: 'b-ent', predicate: 'mailed', object: 'p-1' } }],
          },
          {
            source: { system: 'mail', externalId: 'p-1' },
            kind: 'email',
            occurredAt: '2024-01-03T00:00:00Z',
            content: 'public mail',
          },
        ],
      },
    );
    observationIds.push(...observations);
    factIds.push(
      ...(await seed(
        `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`,
        {
          f: [
            { subject: 'p-1', predicate: 'owes', object: 'p-2', validFrom: INSTANTS[0], scopes: BOB },
            { subject: 'p-2', predicate: 'knows', object: 'b-secret', validFrom: INSTANTS[0] },
            {
              subject: 'p-3',
              predicate: 'likes',
              object: 'p-1',
              validFrom: INSTANTS[0],
              scopes: BOB,
              observationIds: [observations[1]],
            },
            { subject: 'p-1', predicate: 'knows', object: 'p-2', validFrom: INSTANTS[1] },
          ],
        },
      )),
    );
    await seed(
      `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { ${PAYLOAD} } }`,
      {
        d: [
          {
            key: 'doc:bob',
            title: `Handbook ${MARK}`,
            content: `# B\n\n${MARK} handbook`,
            scopes: BOB,
            links: ['p-1'],
          },
        ],
      },
    );
    const snap = await gw.gql(
      `mutation($ns: String!, $s: SnapshotInput!) { reconcileSnapshot(namespace: $ns, snapshot: $s) { closedRelations } }`,
      {
        ns: NS,
        s: {
          scope: 'crm',
          snapshotId: 'b-s1',
          observedAt: '2024-12-01T00:00:00Z',
          entities: [{ key: 'b-crm', kind: 'account', title: `CRM ${MARK}`, scopes: BOB }],
          relations: [{ subject: 'p-2', relation: 'works_with', object: 'p-3', scopes: BOB }],
        },
      },
      { token: tokens.bob },
    );
    expect(snap.errors).toBeUndefined();
    baseline = await dumpScopedRows(gw.db, NS, BOB);
    unheldBaseline = await rowsWithUnheldScopes(gw.db);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const key = fc.constantFrom(...KEYS);
  const scopes = fc.constantFrom(...A_SCOPES, ...UNHELD_SCOPES);
  const text = fc.string({ maxLength: 24 });
  const factId = () => fc.constantFrom(...factIds);
  const observationId = () => fc.constantFrom(...observationIds);
  const factInput = () =>
    fc.record(
      {
        subject: key,
        predicate: fc.constantFrom(...PREDICATES),
        object: key,
        validFrom: fc.constantFrom(...INSTANTS),
        scopes,
        observationIds: fc.array(observationId(), { maxLength: 2 }),
        attributes: fc.option(fc.record({ contradicts: factId() }), { nil: undefined }),
      },
      { requiredKeys: ['subject', 'predicate', 'object'] },
    );

  /** One mutation as [query, variables]; every one addresses or collides with B's rows at times. */
  const mutation = (): fc.Arbitrary<Op> =>
    fc.oneof(
      fc
        .array(fc.record({ key, kind: fc.constantFrom('person', 'thing'), title: text, scopes }), {
          minLength: 1,
          maxLength: 3,
        })
        .map(
          (e): Op => [
            `mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { ${PAYLOAD} } }`,
            { e },
          ],
        ),
      fc
        .array(factInput(), { minLength: 1, maxLength: 3 })
        .map(
          (f): Op => [
            `mutation($f: [FactInput!]!) { assertFacts(namespace: "${NS}", facts: $f) { ${PAYLOAD} } }`,
            { f },
          ],
        ),
      fc
        .tuple(factId(), factInput())
        .map(
          ([id, by]): Op => [
            `mutation($id: String!, $by: FactInput!) { supersedeFact(namespace: "${NS}", factId: $id, by: $by) { ${PAYLOAD} } }`,
            { id, by },
          ],
        ),
      factId().map(
        (id): Op => [
          `mutation($id: String!) { retractFact(namespace: "${NS}", factId: $id, reason: "generated") { ${PAYLOAD} } }`,
          { id },
        ],
      ),
      key.map(
        (k): Op => [
          `mutation($k: String!) { purgeEntity(namespace: "${NS}", key: $k, reason: "generated") { ${PAYLOAD} } }`,
          { k },
        ],
      ),
      observationId().map(
        (id): Op => [
          `mutation($id: String!) { redactObservation(namespace: "${NS}", observationId: $id, reason: "generated") { ${PAYLOAD} } }`,
          { id },
        ],
      ),
      fc
        .record({
          externalId: fc.constantFrom('b-1', 'p-1', 'a-1', 'a-2'),
          content: text,
          scopes,
          assertions: fc.array(
            fc.oneof(
              fc.record({
                entity: fc.record(
                  { key, kind: fc.constant('person'), title: text, scopes },
                  { requiredKeys: ['key', 'kind', 'title'] },
                ),
              }),
              fc.record({
                fact: fc.record(
                  { subject: key, predicate: fc.constantFrom(...PREDICATES), object: key, scopes },
                  { requiredKeys: ['subject', 'predicate', 'object'] },
                ),
              }),
            ),
            { maxLength: 2 },
          ),
        })
        .map(
          (o): Op => [
            `mutation($o: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $o) { ${PAYLOAD} } }`,
            {
              o: [
                {
                  source: { system: 'mail', externalId: o.externalId },
                  kind: 'email',
                  occurredAt: '2024-07-01T00:00:00Z',
                  content: o.content,
                  scopes: o.scopes,
                  assertions: o.assertions,
                },
              ],
            },
          ],
        ),
      fc
        .record({ key, title: text, content: text, scopes, links: fc.array(key, { maxLength: 3 }) })
        .map(
          (d): Op => [
            `mutation($d: [DocumentInput!]!) { retainDocuments(namespace: "${NS}", documents: $d) { ${PAYLOAD} } }`,
            { d: [{ ...d, content: `# Doc\n\n${d.content}` }] },
          ],
        ),
      fc
        .record({
          scope: fc.constantFrom('crm', 'a-src'),
          entities: fc.array(fc.record({ key, kind: fc.constant('account'), scopes }), { maxLength: 3 }),
          relations: fc.array(
            fc.record({ subject: key, relation: fc.constantFrom(...PREDICATES), object: key, scopes }),
            {
              maxLength: 3,
            },
          ),
        })
        .map((s): Op => {
          snapshotClock += 86_400_000;
          const at = new Date(snapshotClock).toISOString();
          return [
            `mutation($s: SnapshotInput!) { reconcileSnapshot(namespace: "${NS}", snapshot: $s) {
               entities { ${PAYLOAD} } relations { ${PAYLOAD} } closedRelations staleEntities } }`,
            { s: { ...s, snapshotId: `a-${snapshotClock}`, observedAt: at } },
          ];
        }),
    );

  /** FORBIDDEN items whose message is not the scope-assignment refusal (an unexpected refusal). */
  const refusals = (data: unknown): string[] =>
    JSON.stringify(data ?? null)
      .match(/"code":"FORBIDDEN","message":"[^"]*"/g)
      ?.filter((m) => !/may not assign scopes? /.test(m)) ?? [];

  it(`${RUNS} runs of up to 6 random mutations leave every B-scoped row as it was`, async () => {
    expect(dumpSize(baseline)).toBeGreaterThan(10);
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(mutation(), { minLength: 1, maxLength: 6 }), async (ops) => {
        for (const [query, variables] of ops) {
          const res = await gw.gql(query, variables, { token: tokens.alice });
          requests += 1;
          const body = JSON.stringify(res);
          expect(res.status, body).toBeLessThan(500);
          expect(body, 'an internal error').not.toMatch(/INTERNAL/);
          expect(body.includes(MARK), `A saw B's marker: ${body}`).toBe(false);
          expect(refusals(res.data), 'a FORBIDDEN item that did not say why').toEqual([]);
        }
        expect(await dumpScopedRows(gw.db, NS, BOB)).toEqual(baseline);
        expect(await rowsWithUnheldScopes(gw.db)).toEqual(unheldBaseline);
      }),
      { numRuns: RUNS },
    );
    expect(requests).toBeGreaterThanOrEqual(RUNS);
  });

  it('refuses, item by item, every visibility scope A does not hold; its own and relevance scopes pass', async () => {
    const upsert = `mutation($e: [EntityInput!]!) { upsertEntities(namespace: "${NS}", entities: $e) { ${PAYLOAD} } }`;
    const entities = [...A_SCOPES, ...UNHELD_SCOPES].map((s, i) => ({
      key: `assign-${i}`,
      kind: 'thing',
      scopes: s,
    }));
    const res = await gw.gql<{
      upsertEntities: { results: { index: number; status: string; code: string | null }[] };
    }>(upsert, { e: entities }, { token: tokens.alice });
    expect(res.errors).toBeUndefined();
    const byIndex = [...res.data!.upsertEntities.results].sort((a, b) => a.index - b.index);
    expect(byIndex.map((r) => r.code ?? r.status)).toEqual([
      ...A_SCOPES.map(() => 'CREATED'),
      ...UNHELD_SCOPES.map(() => 'FORBIDDEN'),
    ]);
    // The refused keys stay free: B can take them.
    const taken = await gw.gql<{ upsertEntities: { accepted: number } }>(
      upsert,
      {
        e: UNHELD_SCOPES.map((_, i) => ({
          key: `assign-${A_SCOPES.length + i}`,
          kind: 'thing',
          scopes: BOB,
        })),
      },
      { token: tokens.bob },
    );
    expect(taken.data?.upsertEntities.accepted).toBe(UNHELD_SCOPES.length);
  });
});
