import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { NO_FILTERS } from '../../src/retrieval/channels/filters.js';
import { lexicalChannel } from '../../src/retrieval/channels/lexical.js';
import { type ChunkWrite, replaceChunks } from '../../src/store/chunk-store.js';
import { applySessionContext } from '../../src/store/search-store.js';
import { openTestDatabase } from '../helpers/test-database.js';

const turn = (session: string, second: number, text: string): ChunkWrite => ({
  order: 0,
  kind: 'message',
  title: null,
  heading: null,
  text,
  searchText: text,
  sourcePath: null,
  meta: { sessionId: session },
  scopes: [],
  visibility: [],
  observationId: `obs-${session}-${second}`,
  occurredAt: new Date(Date.UTC(2024, 0, 1, 12, 0, second)),
  pii: false,
  piiCategories: [],
  embedding: null,
  tsConfig: 'english',
});

describe('session context in search text', () => {
  let db: Database;
  const ns = 'chat';
  const search = (query: string) =>
    lexicalChannel(db, {
      filter: { ...NO_FILTERS, namespaces: [ns], visibleScopes: null },
      query,
      limit: 10,
      k1: 1.2,
      b: 0.75,
      maxTerms: 64,
      prefilter: null,
    });
  const searchText = async (node: string) =>
    (
      await db.query<{ s: string }>(
        `SELECT search_text AS s FROM chunks WHERE namespace = $1 AND node_key = $2`,
        [ns, node],
      )
    ).rows[0]!.s;

  beforeAll(async () => {
    db = await openTestDatabase();
    await replaceChunks(db, ns, 't1', [turn('s1', 1, 'Did you finally visit the aquarium?')]);
    await replaceChunks(db, ns, 't2', [turn('s1', 2, 'Yes, last Tuesday with the kids!')]);
    await replaceChunks(db, ns, 't3', [turn('s1', 3, 'That sounds lovely.')]);
    await replaceChunks(db, ns, 'u1', [turn('s2', 1, 'Another session entirely.')]);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('indexes each turn twice plus the previous turn of its session, idempotently', async () => {
    expect(await applySessionContext(db, ns)).toBe(4);
    expect(await searchText('t2')).toBe(
      'Yes, last Tuesday with the kids!\nYes, last Tuesday with the kids!\nDid you finally visit the aquarium?',
    );
    expect(await searchText('t1')).toBe(
      'Did you finally visit the aquarium?\nDid you finally visit the aquarium?',
    );
    expect(await searchText('u1')).toBe('Another session entirely.\nAnother session entirely.');
    expect(await applySessionContext(db, ns)).toBe(0);
    // The answer turn is now found by the words of the question before it; its own turn ranks first.
    const hits = await search('aquarium');
    expect(hits).toHaveLength(2);
    const { rows } = await db.query<{ chunkId: number; node: string }>(
      `SELECT chunk_id AS "chunkId", node_key AS node FROM chunks WHERE namespace = $1`,
      [ns],
    );
    const nodeOf = new Map(rows.map((r) => [Number(r.chunkId), r.node]));
    expect(hits.map((h) => nodeOf.get(h.chunkId))).toEqual(['t1', 't2']);
  });

  it('forgets a removed turn when its session is rebuilt', async () => {
    await db.query(`DELETE FROM chunks WHERE namespace = $1 AND node_key = 't1'`, [ns]);
    expect(await applySessionContext(db, ns, ['s1'])).toBe(1);
    expect(await searchText('t2')).toBe('Yes, last Tuesday with the kids!\nYes, last Tuesday with the kids!');
    expect(await search('aquarium')).toEqual([]);
  });
});
