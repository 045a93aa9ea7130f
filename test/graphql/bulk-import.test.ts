import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_UNAVAILABLE_MESSAGE } from '../../src/errors.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

/**
 * The bulk import mutations: importObservations answers item by item exactly as
 * recordObservations does (validation, duplicates, hidden collisions, assertions), writes the
 * same rows (observation, node entity, chunks, BM25 postings, vectors), and the vector index
 * can be dropped for a large load while reads go on, then built once by finishImport.
 */

const NS = 'bulk';
const STATS_NS = 'bulk-stats';
const ORDER_NS = 'bulk-order';
const RESULT = 'accepted partial rejected results { index status id key code message }';
const IMPORT = `mutation($ns: String!, $o: [ObservationInput!]!) {
  importObservations(namespace: $ns, observations: $o) { ${RESULT} } }`;
const RECORD = `mutation($ns: String!, $o: [ObservationInput!]!) {
  recordObservations(namespace: $ns, observations: $o) { ${RESULT} } }`;

interface Payload {
  accepted: number;
  partial: number;
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

const obs = (i: number, extra: Record<string, unknown> = {}) => ({
  source: { system: 'chat', stream: 'room', externalId: `b${i}` },
  kind: 'message',
  occurredAt: new Date(Date.UTC(2024, 2, 1, 10, 0, i)).toISOString(),
  actor: { type: 'person', id: 'alice' },
  content: `alice: bulk message number ${i} about zebrafish${i}`,
  ...extra,
});

describe('bulk import mutations', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  const as = async (who: string, query: string, variables: Record<string, unknown>) => {
    const res = await gw.gql<Record<string, unknown>>(query, variables, { token: tokens[who] });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return Object.values(res.data!)[0] as Payload;
  };

  beforeAll(async () => {
    const written = writeTokensFile([
      {
        id: 'alice',
        read: [NS, STATS_NS, ORDER_NS],
        write: [NS, STATS_NS, ORDER_NS],
        scopes: ['principal:alice'],
      },
      { id: 'bob', read: [NS], write: [NS], scopes: ['principal:bob'] },
      { id: 'reader', read: [NS], write: [], scopes: [] },
      { id: 'ops', read: [NS], write: [NS], scopes: ['principal:alice'], admin: true },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers per item as recordObservations does, and writes the same rows', async () => {
    const items = [
      obs(1),
      obs(2, { kind: 'Not A Kind' }),
      obs(3),
      obs(3),
      { source: { system: '' }, kind: 'message', occurredAt: '2024-03-01T10:00:00Z' },
      obs(4, {
        assertions: [
          { entity: { key: 'zebra-project', kind: 'project', title: 'Zebra' } },
          { fact: { subject: 'alice', predicate: 'works_on', object: 'zebra-project' } },
        ],
      }),
    ];
    const bulk = await as('alice', IMPORT, { ns: NS, o: items });
    expect(bulk.results.map((r) => [r.index, r.status, r.code])).toEqual([
      [0, 'CREATED', null],
      [1, 'REJECTED', 'INVALID_KIND'],
      [2, 'CREATED', null],
      [3, 'DUPLICATE', null],
      [4, 'REJECTED', 'BAD_USER_INPUT'],
      [5, 'CREATED', null],
    ]);
    // The same items online: every written one is now a DUPLICATE with the same id.
    const online = await as('alice', RECORD, { ns: NS, o: [obs(1), obs(3), obs(4)] });
    expect(online.results.map((r) => r.status)).toEqual(['DUPLICATE', 'DUPLICATE', 'DUPLICATE']);
    expect(online.results.map((r) => r.id)).toEqual([
      bulk.results[0]!.id,
      bulk.results[2]!.id,
      bulk.results[5]!.id,
    ]);

    const ids = [bulk.results[0]!.key, bulk.results[2]!.key];
    const rows = await gw.db.query<{ chunks: number; postings: number; vectors: number; nodes: number }>(
      `SELECT count(DISTINCT c.chunk_id)::int AS chunks, count(p.*)::int AS postings,
              count(DISTINCT c.chunk_id) FILTER (WHERE c.embedding IS NOT NULL)::int AS vectors,
              (SELECT count(*)::int FROM entities e WHERE e.namespace = $1 AND e.key = ANY($2) AND e.kind = 'observation') AS nodes
       FROM chunks c LEFT JOIN chunk_postings p ON p.namespace = c.namespace AND p.chunk_id = c.chunk_id
       WHERE c.namespace = $1 AND c.observation_id = ANY($2)`,
      [NS, ids],
    );
    expect(rows.rows[0]).toMatchObject({ chunks: 2, vectors: 2, nodes: 2 });
    expect(rows.rows[0]!.postings).toBeGreaterThan(10);
    const facts = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM facts WHERE namespace = $1 AND predicate = 'works_on'`,
      [NS],
    );
    expect(facts.rows[0]!.n).toBe(1);

    const search = await gw.gql<{ search: { hits: { chunk: { text: string } | null }[] } }>(
      `query { search(input: { namespaces: ["${NS}"], query: "zebrafish3" }) { hits { chunk { text } } } }`,
      {},
      { token: tokens.alice },
    );
    expect(search.errors).toBeUndefined();
    expect(search.data!.search.hits[0]?.chunk?.text).toContain('zebrafish3');
  });

  it('indexes turns with their neighbours and links named entities, as the online path does', async () => {
    const ns = 'bulk-context';
    const turn = (id: string, minute: number, content: string) => ({
      source: { system: 'chat', stream: 'kitchen', externalId: id },
      kind: 'message',
      occurredAt: new Date(Date.UTC(2024, 4, 1, 9, minute)).toISOString(),
      content,
    });
    const writer = writeTokensFile([{ id: 'w', read: [ns], write: [ns], scopes: ['*'] }]);
    const local = await startTestGateway({ MEMGATE_TOKENS_FILE: writer.path });
    try {
      const run = async (query: string, variables: Record<string, unknown> = {}) => {
        const res = await local.gql<Record<string, unknown>>(query, variables, { token: writer.tokens.w });
        expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
        return res.data!;
      };
      await run(
        `mutation { upsertEntities(namespace: "${ns}", entities: [{ key: "person:marta", kind: "person", title: "Marta" }]) { accepted } }`,
      );
      const imported = (await run(IMPORT, {
        ns,
        o: [
          turn('t1', 0, 'Which dessert should we bake for the party?'),
          turn('t2', 1, 'Marta suggests a lemon tart.'),
        ],
      })) as { importObservations: Payload };
      expect(imported.importObservations.accepted).toBe(2);
      // The answer is found by the words of the question before it (contextual indexing).
      const found = (await run(
        `query { search(input: { namespaces: ["${ns}"], query: "dessert party", mode: LEXICAL, k: 5, hops: 0 }) { hits { chunk { text } } } }`,
      )) as { search: { hits: { chunk: { text: string } }[] } };
      expect(found.search.hits.map((h) => h.chunk.text)).toContain('Marta suggests a lemon tart.');
      // The entity it names is linked (entity linking): Marta's observations hold the turn.
      const marta = (await run(
        `query { entity(namespace: "${ns}", key: "person:marta") { observations(first: 5) { edges { node { content } } } } }`,
      )) as { entity: { observations: { edges: { node: { content: string } }[] } } };
      expect(marta.entity.observations.edges.map((e) => e.node.content)).toContain(
        'Marta suggests a lemon tart.',
      );
    } finally {
      await local.close();
    }
  });

  it('re-indexes the older turns of an open import once, at finishImport, to what online writes index', async () => {
    // Two batches whose turns interleave in time: each turn of the second batch falls between
    // two turns of the first, whose windows change. Written online, the same turns index the same.
    const turn = (i: number) => ({
      source: { system: 'chat', stream: 'orchard', externalId: `o${i}` },
      kind: 'message',
      occurredAt: new Date(Date.UTC(2024, 5, 1, 9, i)).toISOString(),
      content: `turn ${i} speaks of apple${i}`,
    });
    const batches = [[0, 2, 4, 6].map(turn), [1, 3, 5, 7].map(turn)];
    const searchTexts = async (ns: string) =>
      (
        await gw.db.query<{ key: string; text: string }>(
          `SELECT text AS key, search_text AS text FROM chunks WHERE namespace = $1 ORDER BY 1`,
          [ns],
        )
      ).rows;
    const begin = `mutation($ns: String!) { beginImport(namespace: $ns, observations: 8) { vectorIndex } }`;
    await gw.gql(begin, { ns: ORDER_NS }, { token: tokens.alice });
    for (const o of batches) expect((await as('alice', IMPORT, { ns: ORDER_NS, o })).accepted).toBe(4);
    // Before the finish, the first batch's turns are indexed without the second batch's turns.
    const during = await searchTexts(ORDER_NS);
    const online = 'bulk-online';
    const writer = writeTokensFile([{ id: 'w', read: [online], write: [online], scopes: ['*'] }]);
    const local = await startTestGateway({ MEMGATE_TOKENS_FILE: writer.path });
    try {
      for (const o of batches) {
        const res = await local.gql<{ recordObservations: Payload }>(
          RECORD,
          { ns: online, o },
          { token: writer.tokens.w },
        );
        expect(res.data?.recordObservations.accepted).toBe(4);
      }
      const expected = (
        await local.db.query<{ key: string; text: string }>(
          `SELECT text AS key, search_text AS text FROM chunks WHERE namespace = $1 ORDER BY 1`,
          [online],
        )
      ).rows;
      expect(during).not.toEqual(expected);
      const finish = await gw.gql<{ finishImport: { vectorIndex: string } }>(
        `mutation($ns: String!) { finishImport(namespace: $ns) { vectorIndex } }`,
        { ns: ORDER_NS },
        { token: tokens.alice },
      );
      expect(finish.errors).toBeUndefined();
      expect(await searchTexts(ORDER_NS)).toEqual(expected);
    } finally {
      await local.close();
    }
  });

  it('keeps visibility and namespace rules: hidden collisions, read-only principals', async () => {
    const mine = await as('bob', IMPORT, { ns: NS, o: [obs(20, { scopes: ['principal:bob'] })] });
    expect(mine.results[0]!.status).toBe('CREATED');
    const other = await as('alice', IMPORT, { ns: NS, o: [obs(20, { scopes: ['principal:alice'] })] });
    expect(other.results[0]).toMatchObject({
      status: 'REJECTED',
      code: 'KEY_UNAVAILABLE',
      message: KEY_UNAVAILABLE_MESSAGE,
      id: null,
    });
    // Nor may alice file an observation under bob's scope.
    const squat = await as('alice', IMPORT, { ns: NS, o: [obs(22, { scopes: ['principal:bob'] })] });
    expect(squat.results[0]).toMatchObject({ status: 'REJECTED', code: 'FORBIDDEN', id: null });
    const refused = await gw.gql(IMPORT, { ns: NS, o: [obs(21)] }, { token: tokens.reader });
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const elsewhere = await gw.gql(IMPORT, { ns: 'other', o: [obs(21)] }, { token: tokens.alice });
    expect(elsewhere.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const begin = await gw.gql(
      `mutation { beginImport(namespace: "other", observations: 1) { vectorIndex } }`,
      {},
      { token: tokens.alice },
    );
    expect(begin.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('drops the vector index for a large load, reads go on, finishImport builds it once', async () => {
    const begin = await gw.gql<{ beginImport: { vectorIndex: string } }>(
      `mutation { beginImport(namespace: "${NS}", observations: 50, vectorIndex: REBUILD) { vectorIndex indexedChunks } }`,
      {},
      { token: tokens.ops },
    );
    expect(begin.data?.beginImport.vectorIndex).toBe('REBUILD');
    const written = await as('alice', IMPORT, {
      ns: NS,
      o: Array.from({ length: 50 }, (_, i) => obs(100 + i)),
    });
    expect(written.accepted).toBe(50);
    const during = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_indexes WHERE indexname IN ('chunks_embedding_idx', 'chunks_text_trgm_idx')`,
    );
    expect(during.rows[0]!.n).toBe(0);
    // Without the indexes every read still answers (vector search and exact matches as scans).
    const read = await gw.gql<{ search: { hits: { chunk: { text: string } | null }[] } }>(
      `query { search(input: { namespaces: ["${NS}"], query: "bulk message zebrafish120" }) { hits { chunk { text } } } }`,
      {},
      { token: tokens.alice },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data!.search.hits.some((h) => h.chunk?.text.includes('zebrafish120'))).toBe(true);
    const finish = `mutation { finishImport(namespace: "${NS}") { vectorIndex ms } }`;
    const first = await gw.gql<{ finishImport: { vectorIndex: string } }>(
      finish,
      {},
      { token: tokens.alice },
    );
    expect(first.data?.finishImport.vectorIndex).toBe('BUILT');
    const again = await gw.gql<{ finishImport: { vectorIndex: string } }>(
      finish,
      {},
      { token: tokens.alice },
    );
    expect(again.data?.finishImport.vectorIndex).toBe('READY');
    const index = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_indexes WHERE indexname IN ('chunks_embedding_idx', 'chunks_text_trgm_idx')`,
    );
    // The trigram index (the exact channel's) is dropped and built with the vector index.
    expect(index.rows[0]!.n).toBe(2);
  });

  it('serialises index maintenance: concurrent begins and finishes all answer, the index ends valid', async () => {
    const begin = `mutation { beginImport(namespace: "${NS}", observations: 50, vectorIndex: REBUILD) { vectorIndex } }`;
    const finish = `mutation { finishImport(namespace: "${NS}") { vectorIndex } }`;
    // Interleaved drops and builds from many clients at once, as two importers (or a retrying
    // one) would send them: none may fail, however their statements race in the database.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => gw.gql(i % 3 === 0 ? begin : finish, {}, { token: tokens.ops })),
    );
    for (const answer of answers) expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    const last = await gw.gql<{ finishImport: { vectorIndex: string } }>(finish, {}, { token: tokens.alice });
    expect(last.errors).toBeUndefined();
    expect(['BUILT', 'READY']).toContain(last.data?.finishImport.vectorIndex);
    const index = await gw.db.query<{ valid: boolean }>(
      `SELECT i.indisvalid AND i.indisready AS valid FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'chunks_embedding_idx'`,
    );
    expect(index.rows).toEqual([{ valid: true }]);
  });

  it('keeps the planner statistics of a namespace it fills current', async () => {
    const ns = STATS_NS;
    const turn = (i: number) => ({
      source: { system: 'chat', stream: `room-${i % 3}`, externalId: `s${i}` },
      kind: 'message',
      occurredAt: new Date(Date.UTC(2024, 5, 1, 8, 0, i)).toISOString(),
      actor: { type: 'person', id: 'alice' },
      content: `alice: planning note ${i}`,
    });
    const estimate = async (table: string) => {
      const { rows } = await gw.db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
        `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${table} WHERE namespace = $1`,
        [ns],
      );
      const plan = rows[0]!['QUERY PLAN'];
      return (typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan['Plan Rows'] as number;
    };
    for (const batch of [0, 1]) {
      const written = await as('alice', IMPORT, {
        ns,
        o: Array.from({ length: 700 }, (_, i) => turn(batch * 700 + i)),
      });
      expect(written.accepted).toBe(700);
    }
    // Without fresh statistics the planner takes the new namespace for empty and probes each
    // turn's neighbours by a scan of it: work that grows with every batch. The import re-analyzes
    // once a namespace has outgrown its statistics fourfold (autovacuum may have done it sooner,
    // after the first batch), so the estimate is at least a quarter of the 1,400 rows.
    for (const table of ['observations', 'chunks', 'entities']) {
      expect(await estimate(table), table).toBeGreaterThanOrEqual(1400 / 4);
    }
  });

  it('only an admin drops the vector index every namespace shares', async () => {
    const indexValid = async () =>
      (
        await gw.db.query<{ valid: boolean }>(
          `SELECT i.indisvalid AND i.indisready AS valid FROM pg_index i
           JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'chunks_embedding_idx'`,
        )
      ).rows;
    await gw.gql(`mutation { finishImport(namespace: "${NS}") { vectorIndex } }`, {}, { token: tokens.ops });
    expect(await indexValid()).toEqual([{ valid: true }]);
    const forced = await gw.gql(
      `mutation { beginImport(namespace: "${NS}", observations: 50, vectorIndex: REBUILD) { vectorIndex } }`,
      {},
      { token: tokens.alice },
    );
    expect(forced.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(forced.errors?.[0]?.message).toMatch(/Only an admin may rebuild the vector index/);
    // A load the size rule would rebuild for: a plain writer keeps the live index.
    const large = await gw.gql<{ beginImport: { vectorIndex: string } }>(
      `mutation { beginImport(namespace: "${NS}", observations: 1000000) { vectorIndex } }`,
      {},
      { token: tokens.alice },
    );
    expect(large.errors).toBeUndefined();
    expect(large.data?.beginImport.vectorIndex).toBe('KEEP');
    expect(await indexValid()).toEqual([{ valid: true }]);
  });

  it('keeps the live index for a small load', async () => {
    const begin = await gw.gql<{ beginImport: { vectorIndex: string } }>(
      `mutation { beginImport(namespace: "${NS}", observations: 10) { vectorIndex } }`,
      {},
      { token: tokens.alice },
    );
    expect(begin.data?.beginImport.vectorIndex).toBe('KEEP');
  });
});
