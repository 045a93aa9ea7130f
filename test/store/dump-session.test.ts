import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { dumpDatabase } from '../../src/db/dump.js';
import { openTestDatabase } from '../helpers/test-database.js';

/** A backup leaves the database as it found it: the next write succeeds (PGlite shares one session with pg_dump). */

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('a backup', () => {
  it('ends pg_dump’s read-only transaction: the writes after it succeed', async () => {
    // Twice: the first must also leave the search_path the second one reads.
    for (let i = 0; i < 2; i++) {
      for await (const _ of await dumpDatabase(db)) {
        // drained
      }
    }
    await db.transaction('after', (tx) =>
      tx.query(
        `INSERT INTO entities (namespace, key, kind, title) VALUES ('acme', 'after-backup', 'note', 'x')`,
      ),
    );
    const { rows } = await db.query<{ readOnly: string }>(
      `SELECT current_setting('transaction_read_only') AS "readOnly"`,
    );
    expect(rows[0]!.readOnly).toBe('off');
  });
});
