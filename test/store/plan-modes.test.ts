import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { GENERIC_PLAN_STATEMENTS } from '../../src/db/postgres-database.js';
import { openTestDatabase } from '../helpers/test-database.js';

// On native PostgreSQL the hot reads whose custom plans cost more to plan than to run are run
// with generic plans, by their name; the vector channel never is (its generic plan is a
// sequential scan). PGlite has one connection and keeps PostgreSQL's default choice.

const planMode = async (db: Database, name: string): Promise<string> => {
  const { rows } = await db.query<{ mode: string }>(
    `/* ${name} */ SELECT current_setting('plan_cache_mode') AS mode WHERE $1::int = 1`,
    [1],
  );
  return rows[0]!.mode;
};

describe('plan modes of the hot reads', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('graph walk, hit rows, the compiler statements and the typed traversal run with generic plans on native PostgreSQL', async () => {
    expect([...GENERIC_PLAN_STATEMENTS].sort()).toEqual([
      'contextFactsChannel',
      'contextHydrateCandidates',
      'contextMultiHop',
      'contextRecentChannel',
      'currentState',
      'findHitChunks',
      'graphChannel',
      'matchAnchorCandidates',
      'typedTraversalLevel',
    ]);
    const expected = db.backend === 'postgres' ? 'force_generic_plan' : 'auto';
    for (const name of GENERIC_PLAN_STATEMENTS) expect(await planMode(db, name), name).toBe(expected);
  });

  it('the vector, lexical and exact channels and every other statement keep the default', async () => {
    for (const name of ['vectorChannel', 'lexicalChannel', 'exactChannel', 'nestedEntityRead', 'unnamed'])
      expect(await planMode(db, name), name).toBe('auto');
    // Concurrent statements of both kinds each get their own mode.
    const modes = await Promise.all(
      ['graphChannel', 'vectorChannel', 'contextMultiHop', 'lexicalChannel'].map((n) => planMode(db, n)),
    );
    const generic = db.backend === 'postgres' ? 'force_generic_plan' : 'auto';
    expect(modes).toEqual([generic, 'auto', generic, 'auto']);
  });
});
