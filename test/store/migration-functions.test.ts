import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrationFiles } from '../../src/kernel/store/migrate.js';
import { openTestDatabase } from '../helpers/test-database.js';

// Functions that change over time are defined once, in migrations/functions/, and migrations
// re-apply that file with `\ir`: the database runs exactly the file's definitions.

const postingsFile = readFileSync(
  new URL('../../src/kernel/store/migrations/functions/postings.sql', import.meta.url),
  'utf8',
);

/** name → body (between the dollar quotes) of each function the file defines. */
function definitions(sql: string): Map<string, string> {
  const found = sql.matchAll(/CREATE OR REPLACE FUNCTION (\w+)\(\)[^$]*\$\$([\s\S]*?)\$\$;/g);
  return new Map([...found].map((m) => [m[1]!, m[2]!]));
}

describe('trigger functions kept in one file', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a migration line `\\ir functions/postings.sql` runs that file', () => {
    const applying = migrationFiles().filter((f) => f.sql.includes(postingsFile));
    expect(applying.map((f) => f.name)).toContain('023_postings_functions.sql');
    for (const f of migrationFiles()) expect(f.sql, f.name).not.toMatch(/^\\ir /m);
  });

  it('the migrated database holds the postings functions as the file defines them', async () => {
    const wanted = definitions(postingsFile);
    expect([...wanted.keys()].sort()).toEqual([
      'memgate_postings_add',
      'memgate_postings_remove',
      'memgate_postings_update',
    ]);
    const { rows } = await db.query<{ name: string; body: string }>(
      `SELECT proname AS name, prosrc AS body FROM pg_proc WHERE proname = ANY($1::text[])`,
      [[...wanted.keys()]],
    );
    expect(new Map(rows.map((r) => [r.name, r.body]))).toEqual(wanted);
  });
});
