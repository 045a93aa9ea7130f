import { existsSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { openDatabase } from '../db/open-database.js';

/** Where a command reads or writes: a PostgreSQL server, or an embedded folder. */
export interface Location {
  databaseUrl?: string;
  dataDir?: string;
  /** What named it, for messages: `DATABASE_URL`, `MEMGATE_DATA_DIR`, `--to`… */
  origin?: string;
}

export function configuredLocation(config: Config): Location {
  return config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir };
}

/** `postgres://…` is a server; anything else names an embedded folder. */
export function parseLocation(value: string): Location {
  return /^postgres(ql)?:\/\//.test(value) ? { databaseUrl: value } : { dataDir: value };
}

/** A server URL with any password masked. */
export function maskedUrl(databaseUrl: string): string {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return databaseUrl.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
  if (url.password) url.password = '***';
  if (url.searchParams.has('password')) url.searchParams.set('password', '***');
  return url.toString().replace(/%2A%2A%2A/g, '***');
}

/** "PostgreSQL postgres://user:***@host:5432/db" or "embedded folder /absolute/path". */
export function describeLocation(location: Location): string {
  if (location.databaseUrl) return `PostgreSQL ${maskedUrl(location.databaseUrl)}`;
  return `embedded folder ${resolve(location.dataDir ?? '.')}`;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/**
 * What identifies a database without connecting to it: the folder's real path, or host, port
 * and database name with libpq's defaults filled in (port 5432, database named after the user).
 */
export function databaseIdentity(location: Location): string {
  if (!location.databaseUrl) {
    const dir = resolve(location.dataDir ?? '.');
    try {
      return `folder ${realpathSync(dir)}`;
    } catch {
      return `folder ${dir}`; // does not exist yet
    }
  }
  let url: URL;
  try {
    url = new URL(location.databaseUrl);
  } catch {
    return `url ${location.databaseUrl}`;
  }
  const params = url.searchParams;
  let host = (url.hostname || params.get('host') || process.env.PGHOST || 'localhost').toLowerCase();
  if (LOOPBACK.has(host)) host = 'localhost';
  const port = url.port || params.get('port') || process.env.PGPORT || '5432';
  const user = decodeURIComponent(url.username) || params.get('user') || process.env.PGUSER || '';
  const database =
    decodeURIComponent(url.pathname.replace(/^\//, '')) ||
    params.get('dbname') ||
    process.env.PGDATABASE ||
    user;
  return `postgres ${host}:${port}/${database}`;
}

export function sameDatabase(a: Location, b: Location): boolean {
  return databaseIdentity(a) === databaseIdentity(b);
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
      `There is no embedded database in ${resolve(location.dataDir)} (set MEMGATE_DATA_DIR or DATABASE_URL).`,
    );
  }
  return openDatabase({
    databaseUrl: location.databaseUrl,
    dataDir: location.dataDir ?? '',
    statementTimeoutMs: 600_000,
  });
}
