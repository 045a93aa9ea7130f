import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { exactChannel } from '../../src/modules/retrieval/pipeline/channels/exact.js';
import { NO_FILTERS } from '../../src/modules/retrieval/pipeline/channels/filters.js';
import { type ChunkWrite, replaceChunks } from '../../src/kernel/store/chunk-store.js';
import { openTestDatabase } from '../helpers/test-database.js';

const chunk = (order: number, text: string): ChunkWrite => ({
  order,
  kind: 'note',
  title: null,
  heading: null,
  text,
  searchText: text,
  sourcePath: null,
  meta: {},
  scopes: [],
  visibility: [],
  observationId: null,
  occurredAt: null,
  pii: false,
  piiCategories: [],
  embedding: null,
  tsConfig: 'english',
});

describe('exact identifier channel', () => {
  let db: Database;
  const filter = { ...NO_FILTERS, namespaces: ['ids'], visibleScopes: null };
  let ord: Map<number, number>;
  const find = async (tokens: string[], fuzzy = false) =>
    (await exactChannel(db, { filter, tokens, limit: 10, fuzzy })).map((c) => ({
      ord: ord.get(c.chunkId),
      exactMatches: c.exactMatches,
    }));

  beforeAll(async () => {
    db = await openTestDatabase();
    const ids = await replaceChunks(db, 'ids', 'n', [
      chunk(0, 'Deploy failed with ERR_CONN_RESET after commit deadbeef1234.'),
      chunk(1, 'errXconnXreset is not the same thing'),
      chunk(2, 'See src/app/main.ts and ERR_CONN_RESET again, plus E1234.'),
      chunk(3, 'progress 100%_done at step 1x0'),
    ]);
    ord = new Map(ids.map((id, i) => [id, i]));
    await replaceChunks(db, 'elsewhere', 'n', [chunk(0, 'ERR_CONN_RESET in another namespace')]);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('matches literally, without case, with LIKE metacharacters taken as text', async () => {
    expect(await find(['err_conn_reset'])).toEqual([
      { ord: 0, exactMatches: 1 },
      { ord: 2, exactMatches: 1 },
    ]);
    expect(await find(['%_'])).toEqual([]); // shorter than 3 characters: not looked up
    expect(await find(['0%_d'])).toEqual([{ ord: 3, exactMatches: 1 }]);
    // `_` and `%` are characters here, not wildcards.
    expect(await find(['1_0'])).toEqual([]);
    expect(await find(['p%s'])).toEqual([]);
  });

  it('ranks chunks containing more of the identifiers first', async () => {
    const found = await find(['ERR_CONN_RESET', 'E1234', 'src/app/main.ts']);
    expect(found[0]).toEqual({ ord: 2, exactMatches: 3 });
    expect(found).toContainEqual({ ord: 0, exactMatches: 1 });
  });

  it('finds near matches only when asked to', async () => {
    expect(await find(['deadbeef1243'])).toEqual([]);
    expect(await find(['deadbeef1243'], true)).toEqual([{ ord: 0, exactMatches: 0 }]);
  });
});
