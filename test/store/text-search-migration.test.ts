import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/kernel/store/migrate.js';
import { deleteChunks } from '../helpers/postings.js';
import { TEST_EMBEDDING, openTestDatabase } from '../helpers/test-database.js';

// The upgrade of a database written before postings carried their configuration: the
// text-search migration rebuilds postings and statistics from the chunks' tsvectors.

describe('text-search migration on existing data', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('rebuilds per-configuration postings and statistics equal to a recount', async () => {
    // Without postings: the migration is what builds them.
    await db.query(
      `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text, ts_config)
       VALUES ('old', 'a', 0, 'note', 'x', 'Пропуска выдают на проходной', 'russian'),
              ('old', 'b', 0, 'note', 'x', 'Guest passes at the front desk', 'english'),
              ('old', 'c', 0, 'note', 'x', 'the passes desk', 'english')`,
    );
    // Back to the earlier shape: postings and statistics without a configuration.
    await db.exec(`
      DELETE FROM schema_migrations WHERE name = '010_text_search.sql';
      DROP TABLE chunk_postings; DROP TABLE lexical_stats;
      CREATE TABLE chunk_postings (namespace text NOT NULL, lexeme text NOT NULL, chunk_id bigint NOT NULL,
        tf integer NOT NULL, doc_len integer NOT NULL, PRIMARY KEY (namespace, lexeme, chunk_id));
      CREATE TABLE lexical_stats (namespace text PRIMARY KEY, doc_count bigint NOT NULL DEFAULT 0,
        total_len bigint NOT NULL DEFAULT 0);
      ALTER TABLE namespace_settings ADD COLUMN ts_config regconfig NOT NULL DEFAULT 'english';
    `);
    expect(await migrate(db, TEST_EMBEDDING)).toEqual(['010_text_search.sql']);

    const stats = await db.query<{ cfg: string; docs: number; len: number }>(
      `SELECT ts_config::text AS cfg, doc_count::int AS docs, total_len::int AS len
       FROM lexical_stats WHERE namespace = 'old' ORDER BY 1`,
    );
    const recount = await db.query<{ cfg: string; docs: number; len: number }>(
      `SELECT ts_config::text AS cfg, count(DISTINCT chunk_id)::int AS docs,
              sum(coalesce(array_length(l.positions, 1), 1))::int AS len
       FROM chunks c, unnest(c.tsv) AS l WHERE namespace = 'old' GROUP BY 1 ORDER BY 1`,
    );
    expect(stats.rows).toEqual(recount.rows);
    expect(stats.rows.map((r) => [r.cfg, r.docs])).toEqual([
      ['english', 2],
      ['russian', 1],
    ]);
    const postings = await db.query<{ n: number; lexemes: number }>(
      `SELECT count(*)::int AS n, (SELECT count(*)::int FROM chunks c, unnest(c.tsv) WHERE c.namespace = 'old') AS lexemes
       FROM chunk_postings WHERE namespace = 'old'`,
    );
    expect(postings.rows[0]!.n).toBe(postings.rows[0]!.lexemes);
    // Chunk statements keep them right on the new shape.
    await deleteChunks(db, `c.namespace = 'old' AND c.node_key = 'c'`);
    const after = await db.query<{ docs: number }>(
      `SELECT doc_count::int AS docs FROM lexical_stats WHERE namespace = 'old' AND ts_config = 'english'::regconfig`,
    );
    expect(after.rows[0]!.docs).toBe(1);
  });
});
