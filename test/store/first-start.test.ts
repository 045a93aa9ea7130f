/**
 * A first start on an empty data folder creates the embedded database from the install-time
 * template (no initdb, no migrations to run) and says what it is doing; a second start opens it
 * silently. The template here is the suite's own migrated dump, the same kind of file
 * `npm run prepare` writes to dist/assets/.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.js';
import { migrate } from '../../src/kernel/store/migrate.js';
import { TEST_EMBEDDING, onNativePostgres, pgliteTemplatePath } from '../helpers/test-database.js';

// Embedded pass only: native PostgreSQL has no data folder and no template to load.
describe.skipIf(onNativePostgres)('first start of the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memgate-first-start-'));
  const config = { databaseUrl: undefined, dataDir, statementTimeoutMs: 15_000 };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('loads the template into an empty folder, with progress lines, and has nothing left to migrate', async () => {
    const log: string[] = [];
    let asked = 0;
    const db = await openDatabase(config, {
      template: () => {
        asked++;
        return new Blob([readFileSync(pgliteTemplatePath())]);
      },
      log: (msg) => log.push(msg),
    });
    try {
      expect(asked).toBe(1);
      expect(log).toEqual([
        expect.stringMatching(/^creating the embedded database in .*pgdata from the install-time template…$/),
        expect.stringMatching(/^embedded database created in \d+\.\d s$/),
      ]);
      expect(await migrate(db, TEST_EMBEDDING)).toEqual([]);
      await db.query(`/* firstStartWrite */ INSERT INTO schema_migrations (name) VALUES ('999_marker.sql')`);
    } finally {
      await db.close();
    }
  });

  it('opens an existing folder without the template and without a word', async () => {
    const log: string[] = [];
    const db = await openDatabase(config, {
      template: () => {
        throw new Error('the template must not be read for an existing database');
      },
      log: (msg) => log.push(msg),
    });
    try {
      expect(log).toEqual([]);
      const { rows } = await db.query<{ n: number }>(
        `/* firstStartRead */ SELECT count(*)::int AS n FROM schema_migrations WHERE name = '999_marker.sql'`,
      );
      expect(rows[0]!.n).toBe(1);
    } finally {
      await db.close();
    }
  });
});
