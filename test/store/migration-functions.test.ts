import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrationFiles } from '../../src/kernel/store/migrate.js';
import { openTestDatabase } from '../helpers/test-database.js';

// Functions that change over time are defined once, in migrations/functions/, and migrations
// re-apply that file with `\ir`: the database runs exactly the file's definitions. The one such
// file, functions/postings.sql, held the postings trigger functions until 028 dropped them with
// their triggers (chunk statements write their postings themselves).

const postingsFile = readFileSync(
  new URL('../../src/kernel/store/migrations/functions/postings.sql', import.meta.url),
  'utf8',
);

describe('functions kept in one file', () => {
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

  it('the postings triggers and their functions are gone, and the file defines none again', async () => {
    expect(postingsFile).not.toMatch(/CREATE/i);
    const triggers = await db.query<{ name: string }>(
      `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = 'chunks'::regclass AND NOT tgisinternal`,
    );
    expect(triggers.rows).toEqual([]);
    const functions = await db.query<{ name: string }>(
      `SELECT proname AS name FROM pg_proc WHERE proname LIKE 'memgate\\_postings\\_%'`,
    );
    expect(functions.rows).toEqual([]);
  });
});
