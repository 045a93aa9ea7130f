import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Database } from './database.js';

export interface OpenDatabaseOptions {
  /** A migrated PGlite dump to start a new data folder from (see src/install/pglite-template.ts). */
  template?: () => Blob | undefined;
  log?: (msg: string) => void;
}

/** The folder of the embedded database (its lock file lies beside it: data-dir-lock.ts). */
export function embeddedFolder(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'pgdata');
}

/** DATABASE_URL selects native PostgreSQL; otherwise the embedded PGlite in the data directory. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'statementTimeoutMs'> &
    Partial<Pick<Config, 'readDatabaseUrls' | 'replicaMaxLagSeconds'>>,
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  // Each driver is imported only when chosen: loading both costs start-up time for nothing.
  if (config.databaseUrl) {
    const { openPostgres } = await import('./postgres-database.js');
    return openPostgres({
      connectionString: config.databaseUrl,
      statementTimeoutMs: config.statementTimeoutMs,
      readUrls: config.readDatabaseUrls,
      maxReplicaLagSeconds: config.replicaMaxLagSeconds,
    });
  }
  const { openPglite } = await import('./pglite-database.js');
  const dataDir = embeddedFolder(config);
  if (existsSync(join(dataDir, 'PG_VERSION'))) return openPglite({ dataDir });
  const log = options.log ?? (() => {});
  const template = options.template?.();
  const started = performance.now();
  log(
    template
      ? `creating the embedded database in ${dataDir} from the install-time template…`
      : `creating the embedded database in ${dataDir} (initdb, first start only; 10–30 s)…`,
  );
  const db = await openPglite({ dataDir, loadDataDir: template });
  log(`embedded database created in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return db;
}
