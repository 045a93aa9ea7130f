import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite-database.js';
import { EmbeddingMismatchError, migrate } from '../../src/kernel/store/migrate.js';
import { upsertEntity } from '../../src/kernel/store/entity-store.js';
import { onNativePostgres } from '../helpers/test-database.js';

// The embedded database lives in a data folder: what is written survives a restart.
// Embedded pass only: native PostgreSQL keeps its data on its own server.
describe.skipIf(onNativePostgres)('embedded database in a data directory', () => {
  it('keeps data across a restart and refuses another embedding model with the fix named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memgate-persist-'));
    try {
      const first = await openPglite({ dataDir: dir });
      await migrate(first, { model: 'hashing:16', dimensions: 16 });
      await first.transaction('seed', (tx) =>
        upsertEntity(
          tx,
          'ns',
          {
            key: 'k1',
            kind: 'thing',
            title: 'Kept',
            attributes: { a: 1 },
            validFrom: new Date(),
            scopes: [],
            visibility: [],
            sourcePath: null,
            confidence: null,
            origin: 'AGENT',
            pii: false,
            piiCategories: [],
            observationId: null,
          },
          null,
        ),
      );
      await first.close();

      const second = await openPglite({ dataDir: dir });
      expect(await migrate(second, { model: 'hashing:16', dimensions: 16 })).toEqual([]);
      const { rows } = await second.query<{ title: string }>(
        `SELECT title FROM entities WHERE namespace = 'ns' AND key = 'k1'`,
      );
      expect(rows).toEqual([{ title: 'Kept' }]);
      const mismatch = await migrate(second, { model: 'offline:x', dimensions: 100 }).catch(
        (e: unknown) => e,
      );
      expect(mismatch).toBeInstanceOf(EmbeddingMismatchError);
      expect(String(mismatch)).toMatch(/memgate reindex/);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
