import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Database } from './database.js';
import { openPglite } from './pglite-database.js';
import { openPostgres } from './postgres-database.js';

/** DATABASE_URL selects native PostgreSQL; otherwise the embedded PGlite in the data directory. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'statementTimeoutMs'>,
): Promise<Database> {
  if (config.databaseUrl) {
    return openPostgres({
      connectionString: config.databaseUrl,
      statementTimeoutMs: config.statementTimeoutMs,
    });
  }
  return openPglite({ dataDir: join(config.dataDir, 'pgdata') });
}
