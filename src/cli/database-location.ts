import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { openDatabase } from '../db/open-database.js';

/** Where a command reads or writes: a PostgreSQL server, or an embedded folder. */
export interface Location {
  databaseUrl?: string;
  dataDir?: string;
}

export function configuredLocation(config: Config): Location {
  return config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir };
}

/** `postgres://…` is a server; anything else names an embedded folder. */
export function parseLocation(value: string): Location {
  return /^postgres(ql)?:\/\//.test(value) ? { databaseUrl: value } : { dataDir: value };
}

export function describeLocation(location: Location): string {
  if (location.databaseUrl) {
    const url = new URL(location.databaseUrl);
    url.password = url.password ? '***' : '';
    return `PostgreSQL ${url.toString()}`;
  }
  return `embedded folder ${location.dataDir}`;
}

export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(join(dataDir, 'pgdata', 'PG_VERSION'));
}

/**
 * Opens a location without migrating it (a backup or export must not change what it reads).
 * `mustExist` refuses an embedded folder with no database instead of creating an empty one.
 */
export async function openLocation(location: Location, mustExist: boolean): Promise<Database> {
  if (location.dataDir && mustExist && !embeddedDatabaseExists(location.dataDir)) {
    throw new Error(
      `There is no embedded database in ${location.dataDir} (set MEMGATE_DATA_DIR or DATABASE_URL).`,
    );
  }
  return openDatabase({
    databaseUrl: location.databaseUrl,
    dataDir: location.dataDir ?? '',
    statementTimeoutMs: 600_000,
  });
}
