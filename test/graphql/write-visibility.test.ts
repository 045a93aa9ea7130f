import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_UNAVAILABLE_MESSAGE } from '../../src/errors.js';
import { globalId } from '../../src/global-id.js';
import { type GqlResponse, type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { dumpScopedRows, dumpSize } from '../helpers/hidden-rows.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * Writes respect visibility scopes. In namespace `team-a`, bob (scope `principal:bob`) owns
 * rows that alice (scopes `workspace:wa`, `principal:alice`) cannot see. As alice:
 *
 * - a write that addresses an existing row answers for a hidden row exactly as for an absent
 *   one (same status, code and message once the key asked for is masked);
 * - a write that would collide with a hidden row's key or source identity is REJECTED with the
 *   one documented code and message, naming nothing of the row;
 * - nothing of bob's changes (a dump of every bob-scoped row is compared before and after);
 * - a fact is visible only if it and both its endpoints are (`fact`, `provenance`,
 *   `entity.facts` and context agree, and a hidden anchor reads like an absent one).
 */

const NS = 'team-a';
const BOB = ['principal:bob'];
const MARK = 'bobmark';
const PAYLOAD = 'accepted rejected results { index status id key code message }';

interface Payload {
  accepted: number;
  rejected: number;
  results: {
    index: number;
    status: string;
    id: string | null;
    key: string | null;
    code: string | null;
    message: string | null;
  }[];
}

describe('writes respect visibility scopes', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  let bobObservationId: string;
  let publicObservationId: string;
  let hiddenFactId: string;
  let leakyFactId: string;

  const as = (who: string, query: string, variables: Record<string, unknown> = {}) =>
    gw.gql<Record<string, unknown>>(query, variables, { token: tokens[who] });

  const write = async (who: string, query: string, variables: Record<string, unknown>): Promise<Payload> => {
    const res = await as(who, query, variables);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return Object.values(res.data!)[0] as Payload;
  };

  const seeded = async (query: string, variables: Record<string, unknown>) => {
    const payload = await write('bob', query, { ns: NS, ...variables });
    expect(payload.rejected, JSON.stringify(payload.results)).toBe(0);
    return payload.results;
  };

  const dump = () => dumpScopedRows(gw.db, NS, BOB);

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'alice', read: [NS], write: [NS], scopes: ['workspace:wa', 'principal:alice'] },
      { id: 'bob', read: [NS], write: [NS], scopes: BOB },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });

    await seeded(
      `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${PAYLOAD} } }`,
      {
        e: [
          {
            key: 'bobonly-a',
            kind: 'person',
            title: `Bob only ${MARK}`,
            attributes: { code: MARK },
            scopes: BOB,
          },
          { key: 'secret-a', kind: 'person', title: `Secret ${MARK}`, scopes: BOB },
          { key: 'alice-e', kind: 'person', title: 'Alice public' },
          { key: 'pub-1', kind: 'thing', title: 'Public one' },
          { key: 'pub-2', kind: 'thing', title: 'Public two' },
        ],
      },
    );
    const facts = await seeded(
      `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`,
      {
        f: [
          {
            subject: 'pub-1',
            predicate: 'owes',
            object: 'pub-2',
            validFrom: '2024-01-01T00:00:00Z',
            scopes: BOB,
          },
          { subject: 'alice-e', predicate: 'knows', object: 'secret-a', validFrom: '2024-01-01T00:00:00Z' },
          { subject: 'bobonly-a', predicate: 'knows', object: 'pub-1' },
        ],
      },
    );
    hiddenFactId = facts[0]!.key!;
    leakyFactId = facts[1]!.key!;
    const observations = await seeded(
      `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { ${PAYLOAD} } }`,
      {
        o: [
          {
            source: { system: 'mail', externalId: 'b-1' },
            kind: 'email',
            occurredAt: '2024-01-02T00:00:00Z',
            content: `bob private mail ${MARK}`,
            scopes: BOB,
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
    bobObservationId = observations[0]!.key!;
    publicObservationId = observations[1]!.key!;
    // bob's own conclusion from a public observation: redacting that observation would change it.
    await seeded(
      `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`,
      {
        f: [
          {
            subject: 'pub-2',
            predicate: 'mailed',
            object: 'pub-1',
            scopes: BOB,
            observationIds: [publicObservationId],
          },
        ],
      },
    );
    await seeded(
      `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { ${PAYLOAD} } }`,
      {
        d: [
          {
            key: 'doc:bob',
            title: `Bob handbook ${MARK}`,
            content: `# Bob\n\n${MARK} handbook`,
            scopes: BOB,
          },
        ],
      },
    );
    const snap = await as(
      'bob',
      `mutation($ns: String!, $s: SnapshotInput!) { reconcileSnapshot(namespace: $ns, snapshot: $s) {
         entities { rejected } relations { rejected } } }`,
      {
        ns: NS,
        s: {
          scope: 'crm',
          snapshotId: 's1',
          observedAt: '2024-02-01T00:00:00Z',
          entities: [{ key: 'crm-bob', kind: 'account', title: `CRM ${MARK}`, scopes: BOB }],
          relations: [{ subject: 'pub-1', relation: 'works_with', object: 'pub-2', scopes: BOB }],
        },
      },
    );
    expect(snap.errors).toBeUndefined();
    expect(snap.data).toEqual({
      reconcileSnapshot: { entities: { rejected: 0 }, relations: { rejected: 0 } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('the dump of bob-scoped rows holds what was seeded (positive control)', async () => {
    const rows = await dump();
    expect(rows.entities!.length).toBe(5); // four seeded, and the observation's node
    expect(rows.observations!.length).toBe(1);
    expect(rows.facts!.length).toBeGreaterThanOrEqual(4);
    expect(dumpSize(rows)).toBeGreaterThan(10);
  });

  it('a snapshot closes only the relations and marks stale only the entities its writer can see', async () => {
    const before = await dump();
    const res = await as(
      'alice',
      `mutation { reconcileSnapshot(namespace: "${NS}", snapshot: { scope: "crm", snapshotId: "s2",
         observedAt: "2024-03-01T00:00:00Z", entities: [], relations: [] }) { closedRelations staleEntities } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ reconcileSnapshot: { closedRelations: [], staleEntities: [] } });
    expect(await dump()).toEqual(before);
  });

  const absentFact = 'fact-000000000000000000000000';
  {
    const probes: { name: string; query: string; hidden: () => string; absent: string }[] = [
      {
        name: 'purgeEntity',
        query: `mutation { purgeEntity(namespace: "${NS}", key: "KEY", reason: "gdpr") { ${PAYLOAD} } }`,
        hidden: () => 'bobonly-a',
        absent: 'nobody-a',
      },
      {
        name: 'redactObservation',
        query: `mutation { redactObservation(namespace: "${NS}", observationId: "KEY", reason: "pii") { ${PAYLOAD} } }`,
        hidden: () => bobObservationId,
        absent: 'obs-000000000000000000000000',
      },
      {
        name: 'retractFact',
        query: `mutation { retractFact(namespace: "${NS}", factId: "KEY", reason: "wrong") { ${PAYLOAD} } }`,
        hidden: () => hiddenFactId,
        absent: absentFact,
      },
      {
        name: 'retractFact (visible fact, hidden endpoint)',
        query: `mutation { retractFact(namespace: "${NS}", factId: "KEY", reason: "wrong") { ${PAYLOAD} } }`,
        hidden: () => leakyFactId,
        absent: absentFact,
      },
      {
        name: 'supersedeFact',
        query: `mutation { supersedeFact(namespace: "${NS}", factId: "KEY",
          by: { subject: "pub-1", predicate: "owes", object: "alice-e" }) { ${PAYLOAD} } }`,
        hidden: () => hiddenFactId,
        absent: absentFact,
      },
      {
        name: 'assertFacts (attributes.contradicts)',
        query: `mutation { assertFacts(namespace: "${NS}", facts: [{ subject: "pub-1", predicate: "rates",
          object: "pub-2", attributes: { contradicts: "KEY" } }]) { ${PAYLOAD} } }`,
        hidden: () => hiddenFactId,
        absent: absentFact,
      },
      {
        name: 'assertFacts (observationIds)',
        query: `mutation { assertFacts(namespace: "${NS}", facts: [{ subject: "pub-1", predicate: "cites",
          object: "pub-2", observationIds: ["KEY"] }]) { ${PAYLOAD} } }`,
        hidden: () => bobObservationId,
        absent: 'obs-000000000000000000000000',
      },
    ];
    for (const probe of probes) {
      it(`${probe.name} on a hidden row answers exactly as on an absent one, and changes nothing`, async () => {
        const before = await dump();
        const answer = async (key: string) => {
          const res = await as('alice', probe.query.replace('KEY', key));
          return JSON.stringify({
            status: res.status,
            data: res.data ?? null,
            errors: res.errors ?? null,
            // Not even the work done may differ: the same number of SQL statements.
            statements: res.extensions?.sql?.statements ?? null,
          }).replaceAll(key, '<key>');
        };
        const hidden = await answer(probe.hidden());
        expect(hidden, probe.name).toBe(await answer(probe.absent));
        expect(hidden, probe.name).toContain('NOT_FOUND');
        expect(hidden, probe.name).toMatch(/"statements":[1-9]/);
        expect(await dump(), `${probe.name} changed a bob-scoped row`).toEqual(before);
      });
    }
  }

  {
    const collisions: {
      name: string;
      query: string;
      variables?: Record<string, unknown>;
      pick: (d: unknown) => unknown;
    }[] = [
      {
        name: 'upsertEntities on a hidden key',
        query: `mutation { upsertEntities(namespace: "${NS}", entities: [{ key: "bobonly-a", kind: "person", title: "Alice was here" }]) { ${PAYLOAD} } }`,
        pick: (d) => (d as { upsertEntities: Payload }).upsertEntities.results[0],
      },
      {
        name: 'retainDocuments on a hidden document',
        query: `mutation { retainDocuments(namespace: "${NS}", documents: [{ key: "doc:bob", title: "Alice doc", content: "alice text" }]) { ${PAYLOAD} } }`,
        pick: (d) => (d as { retainDocuments: Payload }).retainDocuments.results[0],
      },
      {
        name: "recordObservations with a hidden observation's source identity",
        query: `mutation { recordObservations(namespace: "${NS}", observations: [{ source: { system: "mail", externalId: "b-1" },
          kind: "email", occurredAt: "2024-05-01T00:00:00Z", content: "alice mail" }]) { ${PAYLOAD} } }`,
        pick: (d) => (d as { recordObservations: Payload }).recordObservations.results[0],
      },
      {
        name: 're-asserting a hidden fact',
        query: `mutation { assertFacts(namespace: "${NS}", facts: [{ subject: "pub-1", predicate: "owes", object: "pub-2",
          validFrom: "2024-01-01T00:00:00Z" }]) { ${PAYLOAD} } }`,
        pick: (d) => (d as { assertFacts: Payload }).assertFacts.results[0],
      },
      {
        name: 'a fact onto a hidden endpoint',
        query: `mutation { assertFacts(namespace: "${NS}", facts: [{ subject: "alice-e", predicate: "likes", object: "bobonly-a" }]) { ${PAYLOAD} } }`,
        pick: (d) => (d as { assertFacts: Payload }).assertFacts.results[0],
      },
      {
        name: 'a snapshot listing a hidden entity',
        query: `mutation { reconcileSnapshot(namespace: "${NS}", snapshot: { scope: "crm-alice", snapshotId: "a1",
          observedAt: "2024-02-02T00:00:00Z", entities: [{ key: "crm-bob", kind: "account", title: "Alice's" }] }) {
          entities { ${PAYLOAD} } } }`,
        pick: (d) =>
          (d as { reconcileSnapshot: { entities: Payload } }).reconcileSnapshot.entities.results[0],
      },
      {
        name: 'an observation asserting a hidden entity',
        query: `mutation { recordObservations(namespace: "${NS}", observations: [{ source: { system: "agent", externalId: "a-9" },
          kind: "note", occurredAt: "2024-05-01T00:00:00Z", assertions: [{ entity: { key: "secret-a", kind: "person", title: "Alice" } }] }]) { ${PAYLOAD} } }`,
        // The observation is evidence and is kept; its one assertion is refused with the same code.
        pick: (d) => {
          const r = (d as { recordObservations: Payload }).recordObservations.results[0]!;
          expect(r.message).toContain(`KEY_UNAVAILABLE: ${KEY_UNAVAILABLE_MESSAGE}`);
          return { status: 'REJECTED', id: null, code: 'KEY_UNAVAILABLE', message: KEY_UNAVAILABLE_MESSAGE };
        },
      },
    ];
    for (const c of collisions) {
      it(`${c.name}: the one collision answer, naming nothing, changing nothing`, async () => {
        const before = await dump();
        const res = await as('alice', c.query, c.variables);
        expect(res.errors, `${c.name}: ${JSON.stringify(res.errors)}`).toBeUndefined();
        const result = c.pick(res.data) as Payload['results'][number];
        expect(
          { status: result.status, id: result.id, code: result.code, message: result.message },
          c.name,
        ).toEqual({
          status: 'REJECTED',
          id: null,
          code: 'KEY_UNAVAILABLE',
          message: KEY_UNAVAILABLE_MESSAGE,
        });
        const text = JSON.stringify(res);
        expect(
          text.includes(MARK) || text.includes(bobObservationId) || text.includes(hiddenFactId),
          c.name,
        ).toBe(false);
        expect(await dump(), `${c.name} changed a bob-scoped row`).toEqual(before);
      });
    }
  }

  it('purge and redaction of a visible row that hidden rows depend on are refused, and change nothing', async () => {
    const before = await dump();
    // pub-1 is visible to alice, but bob's facts touch it.
    const purge = await write(
      'alice',
      `mutation { purgeEntity(namespace: "${NS}", key: "pub-1", reason: "gdpr") { ${PAYLOAD} } }`,
      {},
    );
    expect(purge.results[0]).toMatchObject({
      status: 'REJECTED',
      code: 'KEY_UNAVAILABLE',
      message: KEY_UNAVAILABLE_MESSAGE,
    });
    expect(await dump()).toEqual(before);
    // A visible entity nothing hidden depends on is purged as before.
    await write(
      'alice',
      `mutation { upsertEntities(namespace: "${NS}", entities: [{ key: "alice-tmp", kind: "thing" }]) { ${PAYLOAD} } }`,
      {},
    );
    const own = await write(
      'alice',
      `mutation { purgeEntity(namespace: "${NS}", key: "alice-tmp", reason: "tidy") { ${PAYLOAD} } }`,
      {},
    );
    expect(own.results[0]!.status).toBe('UPDATED');
    // The public observation is visible to alice, but bob's fact cites it.
    const redact = await write(
      'alice',
      `mutation { redactObservation(namespace: "${NS}", observationId: "${publicObservationId}", reason: "pii") { ${PAYLOAD} } }`,
      {},
    );
    expect(redact.results[0]).toMatchObject({
      status: 'REJECTED',
      code: 'KEY_UNAVAILABLE',
      message: KEY_UNAVAILABLE_MESSAGE,
    });
    expect(await dump()).toEqual(before);
  });

  {
    const reads: [string, string, () => string, string][] = [
      [
        'fact(factId) of a visible fact whose object is hidden',
        `{ fact(namespace: "${NS}", factId: "KEY") { factId subject { key title } object { key title } } }`,
        () => leakyFactId,
        absentFact,
      ],
      [
        'provenance of that fact',
        `{ provenance(id: "KEY") { steps { kind id label } } }`,
        () => globalId('Fact', NS, leakyFactId),
        globalId('Fact', NS, absentFact),
      ],
      [
        'context GRAPH anchored on a hidden entity',
        `{ context(input: { namespaces: ["${NS}"], anchors: ["KEY"], strategy: GRAPH, k: 16 }) {
           text sections { kind items { id kind text title } } sources { key } warnings emptyReason budget { dropped { id reason } } } }`,
        () => 'secret-a',
        'nobody-a',
      ],
      [
        'context GRAPH anchored on a hidden entity with a public edge',
        `{ context(input: { namespaces: ["${NS}"], anchors: ["KEY"], strategy: GRAPH, k: 16 }) {
           text sections { kind items { id kind text title } } warnings emptyReason } }`,
        () => 'bobonly-a',
        'nobody-a',
      ],
      [
        'timeline of a hidden entity',
        `{ timeline(namespace: "${NS}", key: "KEY") { edges { node { kind } } } }`,
        () => 'secret-a',
        'nobody-a',
      ],
    ];
    for (const [name, template, hidden, absent] of reads) {
      it(`${name} answers exactly as an absent one`, async () => {
        const answer = async (key: string) => {
          const res: GqlResponse = await as('alice', template.replace('KEY', key));
          return JSON.stringify({ data: res.data ?? null, errors: res.errors ?? null }).replaceAll(
            key,
            '<key>',
          );
        };
        expect(await answer(hidden()), template).toBe(await answer(absent));
      });
    }
  }

  it('entity.facts, search and context from a visible node never reach a hidden one; bob sees them', async () => {
    const queries = [
      `{ entity(namespace: "${NS}", key: "alice-e") { facts(first: 50) { totalCount edges { node { factId object { key title } } } } neighbors(hops: 2) { entity { key title } } } }`,
      `{ context(input: { namespaces: ["${NS}"], anchors: ["alice-e"], strategy: GRAPH, k: 16 }) { text sections { items { id text title } } } }`,
      `{ search(input: { namespaces: ["${NS}"], query: "Alice public knows secret", k: 20, hops: 2 }) { context neighbors { entity { key title } } hits { chunk { text } } } }`,
      `{ facets(namespace: "${NS}") { predicates { key count } } }`,
    ];
    for (const q of queries) {
      const alice = JSON.stringify((await as('alice', q)).data);
      expect(
        alice.includes(MARK) || alice.includes('secret-a') || alice.includes(leakyFactId),
        `${q} as alice`,
      ).toBe(false);
    }
    const bob = JSON.stringify((await as('bob', queries[0]!)).data);
    expect(bob).toContain(leakyFactId);
    const facets = (await as('alice', queries[3]!)).data as {
      facets: { predicates: { key: string; count: number }[] };
    };
    expect(facets.facets.predicates.find((p) => p.key === 'knows')).toBeUndefined();
  });
});
