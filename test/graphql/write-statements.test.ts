import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNKS_PER_INSERT } from '../../src/modules/documents/store/document-batch-store.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const NS = 'write-statements';
const MAX_STATEMENTS = 40;

/**
 * Batch writes are set-based: the same mutation over 10 items and over 500 costs the same
 * number of SQL statements (savepoints included), and never more than 40. Every batch has the
 * same shape whatever its size (each key asserted twice, half the facts already known), so the
 * count can only differ if some statement is issued per item.
 */
describe('batch writes: SQL statements per batch do not grow with the number of items', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const statementsOf = async (
    field: string,
    query: string,
    variables: Record<string, unknown>,
    items: number,
    on: TestGateway = gw,
  ): Promise<number> => {
    const res = await on.gql<Record<string, { accepted: number; rejected: number }>>(query, variables);
    expect(res.errors).toBeUndefined();
    expect(res.data![field]!.rejected).toBe(0);
    expect(res.data![field]!.accepted).toBe(items);
    return (res.extensions as { sql: { statements: number } }).sql.statements;
  };

  const entities = (run: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      key: `${run}:e${Math.floor(i / 2)}`,
      kind: 'project',
      title: `Project ${run} ${i}`,
      attributes: { step: i },
      validFrom: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(),
    }));

  it('upsertEntities: each key twice, new attribute versions', async () => {
    const query = `mutation($ns: String!, $e: [EntityInput!]!) {
      upsertEntities(namespace: $ns, entities: $e) { accepted rejected }
    }`;
    const small = await statementsOf('upsertEntities', query, { ns: NS, e: entities('s', 10) }, 10);
    const large = await statementsOf('upsertEntities', query, { ns: NS, e: entities('l', 500) }, 500);
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  const facts = (run: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      subject: `${run}:svc${i}`,
      predicate: 'depends_on',
      object: `${run}:svc${(i * 7 + 1) % n}`,
      validFrom: new Date(Date.UTC(2024, 0, 1 + (i % 2))).toISOString(),
      evidence: 'ASSERTED',
      confidence: 0.9,
    }));

  it('assertFacts: new facts and reinforcements alike', async () => {
    const query = `mutation($ns: String!, $f: [FactInput!]!) {
      assertFacts(namespace: $ns, facts: $f) { accepted rejected }
    }`;
    const count = async (run: string, n: number) => {
      const first = facts(run, n);
      await statementsOf('assertFacts', query, { ns: NS, f: first.slice(0, n / 2) }, n / 2);
      // Half of these are known now: they reinforce, the other half are created.
      return statementsOf('assertFacts', query, { ns: NS, f: first }, n);
    };
    const small = await count('fs', 10);
    const large = await count('fl', 500);
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  const observations = (run: string, n: number, withAssertions: boolean) =>
    Array.from({ length: n }, (_, i) => ({
      source: { system: 'statements', stream: run, externalId: `${run}-${withAssertions}-${i}` },
      kind: 'message',
      occurredAt: new Date(Date.UTC(2024, 1, 1, 0, i)).toISOString(),
      actor: { type: 'person', id: `${run}:p${i % 7}` },
      content: `message ${i} of ${run} about the rollout`,
      ...(withAssertions
        ? {
            assertions: [
              { entity: { key: `${run}:proj${Math.floor(i / 2)}`, kind: 'project', title: `P${i}` } },
              {
                fact: {
                  subject: `${run}:p${i % 7}`,
                  predicate: 'works_on',
                  object: `${run}:proj${Math.floor(i / 2)}`,
                },
              },
              {
                fact: {
                  subject: `${run}:proj${Math.floor(i / 2)}`,
                  predicate: 'depends_on',
                  object: `${run}:svc${i}`,
                },
              },
            ],
          }
        : {}),
    }));

  const RECORD = `mutation($ns: String!, $o: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $o) { accepted rejected }
  }`;

  it('recordObservations, plain', async () => {
    const small = await statementsOf(
      'recordObservations',
      RECORD,
      { ns: NS, o: observations('ps', 10, false) },
      10,
    );
    const large = await statementsOf(
      'recordObservations',
      RECORD,
      { ns: NS, o: observations('pl', 500, false) },
      500,
    );
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it('recordObservations with a model configured: queueing model extraction adds one statement at most', async () => {
    // The model is a local stand-in that must not be called: the write path only queues.
    const fake = await startFakeOpenAI();
    const withModel = await startTestGateway(
      { MEMGATE_LLM: 'openai:statements-test', OPENAI_BASE_URL: fake.url },
      { extractionWorker: false } as never,
    );
    try {
      const ns = `${NS}-model`;
      const count = (on: TestGateway, run: string, n: number) =>
        statementsOf('recordObservations', RECORD, { ns, o: observations(run, n, false) }, n, on);
      const offSmall = await count(gw, 'ms', 10);
      const offLarge = await count(gw, 'ml', 500);
      const onSmall = await count(withModel, 'ms', 10);
      const onLarge = await count(withModel, 'ml', 500);
      expect(onLarge).toBe(onSmall);
      expect(onSmall - offSmall).toBeGreaterThanOrEqual(0);
      expect(onSmall - offSmall).toBeLessThanOrEqual(1);
      expect(onLarge - offLarge).toBeGreaterThanOrEqual(0);
      expect(onLarge - offLarge).toBeLessThanOrEqual(1);
      // Every observation was queued; with no model configured, none.
      const jobs = async (on: TestGateway) =>
        (
          await on.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM extraction_jobs WHERE namespace = $1',
            [ns],
          )
        ).rows[0]!.n;
      expect(await jobs(withModel)).toBe(510);
      expect(await jobs(gw)).toBe(0);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await withModel.close();
      await fake.close();
    }
  });

  it('recordObservations with 1 entity + 2 facts each', async () => {
    const small = await statementsOf(
      'recordObservations',
      RECORD,
      { ns: NS, o: observations('as', 10, true) },
      10,
    );
    const large = await statementsOf(
      'recordObservations',
      RECORD,
      { ns: NS, o: observations('al', 500, true) },
      500,
    );
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(MAX_STATEMENTS);
  });
});

/**
 * retainDocuments: every batch has the same shape — half its documents new, a quarter
 * unchanged, a quarter rewritten with other text and links — each of four sections, linking
 * to documents of the batch and to a key that does not exist.
 */
describe('retainDocuments: SQL statements per batch do not grow with the number of documents', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const RETAIN = `mutation($ns: String!, $d: [DocumentInput!]!) {
    retainDocuments(namespace: $ns, documents: $d) { accepted rejected results { status } }
  }`;
  const SECTIONS = ['Overview', 'Design', 'Operations', 'Decisions'];

  const documents = (run: string, n: number, version: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => ({
      key: `${run}:doc${i}`,
      title: `Notes ${run} ${i}`,
      content: SECTIONS.map((h) => `## ${h}\n\n${h} of document ${i}, ${version(i)}: the rollout plan.`).join(
        '\n\n',
      ),
      sourcePath: `docs/${run}/${i}.md`,
      meta: { team: `team-${i % 5}` },
      links: [`${run}:doc${(i * 7 + 1) % n}`, `${run}:missing`],
    }));

  const count = async (run: string, n: number) => {
    const first = documents(run, n / 2, () => 'first version');
    const seeded = await gw.gql<{ retainDocuments: { accepted: number } }>(RETAIN, { ns: NS, d: first });
    expect(seeded.data?.retainDocuments.accepted).toBe(n / 2);
    const second = documents(run, n, (i) => (i < n / 2 && i % 2 === 0 ? 'first version' : 'second version'));
    const res = await gw.gql<{
      retainDocuments: { accepted: number; rejected: number; results: { status: string }[] };
    }>(RETAIN, { ns: NS, d: second });
    expect(res.errors).toBeUndefined();
    expect(res.data!.retainDocuments.rejected).toBe(0);
    const statuses = res.data!.retainDocuments.results.map((r) => r.status);
    expect(statuses.filter((s) => s === 'CREATED')).toHaveLength(n / 2);
    expect(statuses.filter((s) => s === 'UPDATED').length).toBeGreaterThanOrEqual(n / 4);
    return (res.extensions as { sql: { statements: number } }).sql.statements;
  };

  it('12 and 500 documents (4 sections each) cost the same statements but one chunk insert per 250 chunks', async () => {
    const small = await count('ds', 12);
    const large = await count('dl', 500);
    // The chunk insert is sliced so that no statement runs into the statement timeout; of a
    // batch of n, the n/2 new and the n/4 rewritten documents get chunks.
    const slices = (n: number) => Math.ceil((((3 * n) / 4) * SECTIONS.length) / CHUNKS_PER_INSERT);
    expect(large - slices(500)).toBe(small - slices(12));
    expect(large).toBeLessThanOrEqual(MAX_STATEMENTS);
    const chunks = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chunks WHERE namespace = '${NS}' AND node_key LIKE 'dl:doc%'`,
    );
    expect(chunks.rows[0]!.n).toBe(500 * SECTIONS.length);
  });
});

/**
 * reconcileSnapshot: the second snapshot of a scope keeps half of what the first listed,
 * updates a quarter, adds as much again, and drops a quarter of the first's relations.
 */
describe('reconcileSnapshot: SQL statements per snapshot do not grow with the number of items', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const RECONCILE = `mutation($ns: String!, $s: SnapshotInput!) {
    reconcileSnapshot(namespace: $ns, snapshot: $s) {
      entities { accepted rejected } relations { accepted rejected } closedRelations staleEntities
    }
  }`;
  type Reconciled = {
    reconcileSnapshot: {
      entities: { accepted: number; rejected: number };
      relations: { accepted: number; rejected: number };
      closedRelations: string[];
      staleEntities: string[];
    };
  };

  const snapshot = (run: string, id: string, day: number, from: number, to: number, version: string) => ({
    scope: `service:${run}`,
    snapshotId: id,
    observedAt: new Date(Date.UTC(2024, 2, day)).toISOString(),
    entities: Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return {
        key: `${run}:ep${i}`,
        kind: 'endpoint',
        title: `Endpoint ${i}`,
        attributes: { method: 'GET', version: i % 2 === 0 ? 'v1' : version },
      };
    }),
    relations: Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return { subject: `${run}:ep${i}`, relation: 'calls', object: `${run}:ep${(i + 1) % to}` };
    }),
  });

  const count = async (run: string, n: number) => {
    const first = await gw.gql<Reconciled>(RECONCILE, { ns: NS, s: snapshot(run, 's1', 1, 0, n / 2, 'v1') });
    expect(first.errors).toBeUndefined();
    const res = await gw.gql<Reconciled>(RECONCILE, { ns: NS, s: snapshot(run, 's2', 2, n / 4, n, 'v2') });
    expect(res.errors).toBeUndefined();
    const r = res.data!.reconcileSnapshot;
    expect(r.entities).toEqual({ accepted: (3 * n) / 4, rejected: 0 });
    expect(r.relations).toEqual({ accepted: (3 * n) / 4, rejected: 0 });
    expect(r.staleEntities).toHaveLength(n / 4);
    expect(r.closedRelations.length).toBeGreaterThanOrEqual(n / 4);
    return (res.extensions as { sql: { statements: number } }).sql.statements;
  };

  it('12 and 500 entities and relations cost the same number of statements', async () => {
    const small = await count('ss', 12);
    const large = await count('sl', 500);
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(MAX_STATEMENTS);
  });
});
