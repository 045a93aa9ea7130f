import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import { dumpDatabase } from '../../src/db/dump.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { restoreDump } from '../../src/db/restore.js';
import { importExport, writeExport } from '../../src/modules/portability/export-service.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { NO_DRIFT, indexDrift, insertChunks, updateChunks } from '../helpers/postings.js';
import { openTestDatabase } from '../helpers/test-database.js';

/**
 * The BM25 index (`chunk_postings`, `lexical_stats`) is written by the statements that write
 * chunks, no trigger: after every kind of write the gateway makes it equals a recount from the
 * chunks' tsvectors (test/helpers/postings.ts), and a re-index rewrites only what changed.
 */

const NS = 'postings';
const RESULT = 'accepted results { status key code message }';

interface Turn {
  id: string;
  session: string;
  minute: number;
  text: string;
}

const observation = (t: Turn) => ({
  source: { system: 'chat', stream: t.session, externalId: t.id },
  kind: 'message',
  occurredAt: new Date(Date.UTC(2024, 2, 1, 10, t.minute)).toISOString(),
  actor: { type: 'person', id: 'alice' },
  content: t.text,
});

/**
 * Each posting's row version, by chunk: what a statement rewrote shows as a new xmin. Entity
 * summaries are left out: the refresher writes them in the background, whenever it likes.
 */
async function postingVersions(q: Queryable, namespace: string): Promise<Map<number, Map<string, string>>> {
  const { rows } = await q.query<{ chunkId: string; lexeme: string; version: string }>(
    `SELECT p.chunk_id AS "chunkId", p.ts_config::text || ' ' || p.lexeme AS lexeme, p.xmin::text AS version
     FROM chunk_postings p
     WHERE p.namespace = $1 AND NOT EXISTS (
       SELECT 1 FROM chunks c WHERE c.namespace = p.namespace AND c.chunk_id = p.chunk_id AND c.kind = 'summary')`,
    [namespace],
  );
  const byChunk = new Map<number, Map<string, string>>();
  for (const r of rows) {
    const id = Number(r.chunkId);
    const chunk = byChunk.get(id) ?? new Map<string, string>();
    chunk.set(r.lexeme, r.version);
    byChunk.set(id, chunk);
  }
  return byChunk;
}

/** The chunks of `namespace` whose postings rows were written since `before` (new chunks included). */
function rewritten(
  before: Map<number, Map<string, string>>,
  after: Map<number, Map<string, string>>,
): { chunks: Set<number>; rows: number } {
  const chunks = new Set<number>();
  let rows = 0;
  for (const [id, lexemes] of after) {
    for (const [lexeme, version] of lexemes) {
      if (before.get(id)?.get(lexeme) === version) continue;
      chunks.add(id);
      rows += 1;
    }
  }
  for (const [id, lexemes] of before) {
    for (const lexeme of lexemes.keys()) if (!after.get(id)?.has(lexeme)) chunks.add(id);
  }
  return { chunks, rows };
}

async function postingsCount(q: Queryable, namespace: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM chunk_postings WHERE namespace = $1',
    [namespace],
  );
  expect(rows[0]!.n).toBeGreaterThan(0);
  return rows[0]!.n;
}

describe('BM25 postings written by the chunk statements', () => {
  let gw: TestGateway;
  const keys = new Map<string, string>();

  const mutate = async <T = { accepted: number; results: { status: string; key: string }[] }>(
    query: string,
    variables: Record<string, unknown>,
  ): Promise<T> => {
    const res = await gw.gql<Record<string, T>>(query, variables);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return Object.values(res.data!)[0]!;
  };
  const record = async (turns: Turn[], mutation = 'recordObservations') => {
    const payload = await mutate(
      `mutation($ns: String!, $o: [ObservationInput!]!) { ${mutation}(namespace: $ns, observations: $o) { ${RESULT} } }`,
      { ns: NS, o: turns.map(observation) },
    );
    expect(payload.accepted).toBe(turns.length);
    for (const [i, t] of turns.entries()) keys.set(t.id, payload.results[i]!.key);
  };
  const chunkOf = async (id: string): Promise<number> => {
    const { rows } = await gw.db.query<{ id: string }>(
      `SELECT chunk_id AS id FROM chunks WHERE namespace = $1 AND observation_id = $2 AND node_key = $2`,
      [NS, keys.get(id)],
    );
    return Number(rows[0]!.id);
  };
  const retain = (documents: Record<string, unknown>[]) =>
    mutate<{ results: { status: string }[] }>(
      `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { ${RESULT} } }`,
      { ns: NS, d: documents },
    );
  const purge = (key: string) =>
    mutate(
      `mutation($ns: String!, $key: String!) { purgeEntity(namespace: $ns, key: $key, reason: "test") { ${RESULT} } }`,
      { ns: NS, key },
    );
  const exact = async () => expect(await indexDrift(gw.db)).toEqual(NO_DRIFT);

  beforeAll(async () => {
    gw = await startTestGateway({ MEMGATE_SUMMARIES: '1' });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('no trigger is left on chunks', async () => {
    const { rows } = await gw.db.query(
      `SELECT tgname FROM pg_trigger WHERE tgrelid = 'chunks'::regclass AND NOT tgisinternal`,
    );
    expect(rows).toEqual([]);
  });

  it('online writes: a turn arriving late re-posts only the neighbours whose context it changed', async () => {
    const turn = (n: number, text: string): Turn => ({ id: `t${n}`, session: 's1', minute: n, text });
    await record([
      turn(1, 'Did the harbour pilots board the tanker?'),
      turn(2, 'Yes, two pilots boarded at dawn.'),
      turn(4, 'The tanker then waited for the tide.'),
      turn(5, 'It berthed at noon on Friday.'),
    ]);
    await exact();
    const before = await postingVersions(gw.db, NS);
    const chunks = new Map<string, number>();
    for (const id of ['t1', 't2', 't4', 't5']) chunks.set(id, await chunkOf(id));

    // Turn 3 falls between 2 and 4: with the default window (two turns before, one after) it
    // joins the search text of turns 2, 4 and 5; turn 1's window (turn 2 only) is unchanged.
    await record([turn(3, 'A storm warning came over the radio.')]);
    await exact();
    const after = await postingVersions(gw.db, NS);
    const changed = rewritten(before, after);
    const t3 = await chunkOf('t3');
    expect([...changed.chunks].sort((a, b) => a - b)).toEqual(
      [chunks.get('t2')!, chunks.get('t4')!, chunks.get('t5')!, t3].sort((a, b) => a - b),
    );
    expect(after.get(chunks.get('t1')!)).toEqual(before.get(chunks.get('t1')!));
  });

  it('bulk import: a batch and a late turn of the same stream', async () => {
    const turn = (n: number, text: string): Turn => ({ id: `b${n}`, session: 's2', minute: n, text });
    await record(
      [
        turn(1, 'Which crane lifts the containers?'),
        turn(2, 'The gantry crane on berth seven.'),
        turn(4, 'It was serviced last spring.'),
      ],
      'importObservations',
    );
    await exact();
    await record([turn(3, 'Its operator is on leave until March.')], 'importObservations');
    await exact();
  });

  it('a label-only change rewrites the postings whose flag flips, and no other', async () => {
    const [chunk] = await insertChunks(
      gw.db,
      `INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text)
       VALUES ($1, 'note:label', 0, 'note', 'Pilots', NULL, 'x', 'Pilots guide the tanker into the harbour')`,
      [NS],
    );
    await exact();
    const before = (await postingVersions(gw.db, NS)).get(chunk!.chunkId)!;
    await updateChunks(gw.db, `title = 'Harbour'`, 'c.namespace = $1 AND c.chunk_id = $2', [
      NS,
      chunk!.chunkId,
    ]);
    await exact();
    const after = (await postingVersions(gw.db, NS)).get(chunk!.chunkId)!;
    const moved = [...after].filter(([lexeme, version]) => before.get(lexeme) !== version).map(([l]) => l);
    expect(moved.sort()).toEqual(['english harbour', 'english pilot']);
    // An update that changes no indexed column rewrites nothing.
    await updateChunks(gw.db, `meta = '{"k":1}'`, 'c.namespace = $1 AND c.chunk_id = $2', [
      NS,
      chunk!.chunkId,
    ]);
    expect((await postingVersions(gw.db, NS)).get(chunk!.chunkId)).toEqual(after);
  });

  it('a chunk without lexemes is counted once it has some, and no longer when it loses them', async () => {
    const [chunk] = await insertChunks(
      gw.db,
      `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text)
       VALUES ($1, 'note:empty', 0, 'note', 'x', 'the and of')`,
      [NS],
    );
    await exact();
    const where = 'c.namespace = $1 AND c.chunk_id = $2';
    await updateChunks(gw.db, `search_text = 'lighthouse keeper'`, where, [NS, chunk!.chunkId]);
    await exact();
    await updateChunks(gw.db, `search_text = 'it is'`, where, [NS, chunk!.chunkId]);
    await exact();
  });

  it('documents: created, rewritten, sent unchanged, deleted', async () => {
    const doc = (key: string, body: string) => ({
      key,
      title: `Runbook ${key}`,
      content: `# Runbook\n\n## Start\n\n${body}\n\n## Stop\n\nDrain the queue, then stop the workers.`,
    });
    await retain([
      doc('doc:a', 'Start the workers after the database.'),
      doc('doc:b', 'Warm the cache first.'),
    ]);
    await exact();
    await retain([doc('doc:a', 'Start the workers after the database and the cache.')]);
    await exact();
    const before = await postingVersions(gw.db, NS);
    const unchanged = await retain([doc('doc:b', 'Warm the cache first.')]);
    expect(unchanged.results[0]!.status).toBe('UNCHANGED');
    expect(await postingVersions(gw.db, NS)).toEqual(before);
    await purge('doc:a');
    await exact();
  });

  it('a new context window re-indexes every session', async () => {
    await mutate('mutation($ns: String!) { configureContextWindow(namespace: $ns, previous: 1, next: 0) }', {
      ns: NS,
    });
    await exact();
  });

  it('redacting a turn deletes its postings and re-posts its neighbours', async () => {
    await mutate(
      `mutation($ns: String!, $id: String!) { redactObservation(namespace: $ns, observationId: $id, reason: "test") { ${RESULT} } }`,
      { ns: NS, id: keys.get('t3') },
    );
    await exact();
  });

  it('summaries: stored, then dropped with their entity', async () => {
    await mutate(
      `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${RESULT} } }`,
      {
        ns: NS,
        e: [
          { key: 'vessel:aurora', kind: 'vessel', title: 'Aurora', attributes: { flag: 'Malta' } },
          { key: 'port:rotterdam', kind: 'port', title: 'Rotterdam' },
        ],
      },
    );
    await mutate(
      `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${RESULT} } }`,
      { ns: NS, f: [{ subject: 'vessel:aurora', predicate: 'BERTHED_AT', object: 'port:rotterdam' }] },
    );
    await mutate('mutation($ns: String!) { rebuildSummaries(namespace: $ns) }', { ns: NS });
    let stored = 0;
    for (let i = 0; i < 100 && stored === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { rows } = await gw.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunks WHERE namespace = $1 AND kind = 'summary' AND node_key = 'vessel:aurora'`,
        [NS],
      );
      stored = rows[0]!.n;
    }
    expect(stored).toBeGreaterThan(0);
    await exact();
    await purge('vessel:aurora');
    await exact();
  });

  it('a change of text-search configuration moves every chunk between configurations', async () => {
    for (const textSearch of ['simple', 'auto', 'english']) {
      await mutate(
        'mutation($ns: String!, $ts: String!) { setTextSearch(namespace: $ns, textSearch: $ts) { textSearch } }',
        { ns: NS, ts: textSearch },
      );
      await exact();
    }
    const { rows } = await gw.db.query<{ configs: number }>(
      `SELECT count(DISTINCT ts_config)::int AS configs FROM lexical_stats WHERE namespace = $1 AND doc_count > 0`,
      [NS],
    );
    expect(rows[0]!.configs).toBe(1);
  });

  it('an export imported elsewhere carries no postings: the import writes them', async () => {
    const lines: string[] = [];
    await writeExport(gw.db, [NS], async (line) => {
      lines.push(line);
    });
    const copy = await openTestDatabase();
    try {
      await importExport(copy, Readable.from(lines));
      expect(await indexDrift(copy)).toEqual(NO_DRIFT);
      expect(await postingsCount(copy, NS)).toBe(await postingsCount(gw.db, NS));
    } finally {
      await copy.close();
    }
  });

  it('a restore brings the postings as they were', async () => {
    const copy = await openPglite({});
    try {
      await restoreDump(copy, await dumpDatabase(gw.db));
      // The dump empties the search path of the session it ran in.
      await copy.query('RESET search_path');
      expect(await indexDrift(copy)).toEqual(NO_DRIFT);
      expect(await postingsCount(copy, NS)).toBe(await postingsCount(gw.db, NS));
    } finally {
      await copy.close();
    }
  });
});
