import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { MemgateError } from '../../src/errors.js';
import { onNativePostgres, openTestDatabase } from '../helpers/test-database.js';

/**
 * Two writers that lock the same rows in opposite orders deadlock; PostgreSQL rolls one back.
 * That one is told CONFLICT (reason WRITE_CONFLICT, retryable), never an internal error, and
 * nothing of its transaction stays; the other commits. (PGlite runs one transaction at a time.)
 */

let db: Database;

beforeAll(async () => {
  db = await openTestDatabase();
  await db.query(`CREATE TABLE IF NOT EXISTS conflict_rows (id int PRIMARY KEY, v int NOT NULL)`);
  await db.query(`INSERT INTO conflict_rows VALUES (1, 0), (2, 0) ON CONFLICT DO NOTHING`);
});
afterAll(async () => {
  await db?.close();
});

describe('a deadlock between two writers', () => {
  it.runIf(onNativePostgres)('answers the victim with CONFLICT and keeps the winner whole', async () => {
    let bothLocked!: () => void;
    const firstLocks = new Promise<void>((resolve) => {
      let n = 0;
      bothLocked = () => {
        n += 1;
        if (n === 2) resolve();
      };
    });
    const writer = (first: number, second: number) =>
      db.transaction('conflictWriter', async (tx) => {
        await tx.query(`/* lockFirst */ UPDATE conflict_rows SET v = v + 1 WHERE id = $1`, [first]);
        bothLocked();
        await firstLocks;
        await tx.query(`/* lockSecond */ UPDATE conflict_rows SET v = v + 10 WHERE id = $1`, [second]);
      });
    const outcomes = await Promise.allSettled([writer(1, 2), writer(2, 1)]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    const error = failed[0]!.reason as MemgateError;
    expect(error).toBeInstanceOf(MemgateError);
    expect(error.extensions).toMatchObject({ code: 'CONFLICT', reason: 'WRITE_CONFLICT', retryable: true });
    expect(error.message).not.toMatch(/deadlock|UPDATE|conflict_rows/);
    const { rows } = await db.query<{ total: number }>(`SELECT sum(v)::int AS total FROM conflict_rows`);
    // The winner's two updates (1 + 10), none of the victim's.
    expect(rows[0]!.total).toBe(11);
  });
});
