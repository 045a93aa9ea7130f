import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import pg from 'pg';
import type { Database } from './database.js';
import type { PgliteDatabase } from './pglite-database.js';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * pg_dump's plain SQL format, with rows as multi-row INSERTs instead of COPY blocks: PGlite
 * cannot read `COPY … FROM stdin`, and INSERTs restore through one connection on either backend.
 * Owners, grants and comments are left out so a backup restores under any role. The change
 * outbox's rows are left out too: they name this cluster's transaction ids, meaningless elsewhere,
 * and only live subscribers ever read them.
 */
export const DUMP_ARGS = [
  '--exclude-table-data=change_outbox',
  '--format=plain',
  '--no-owner',
  '--no-privileges',
  '--no-comments',
  '--inserts',
  '--rows-per-insert=1000',
] as const;

/** The last line pg_dump writes: a file without it was cut short. */
export const DUMP_COMPLETE = '-- PostgreSQL database dump complete';

export class DumpError extends Error {}

export function isPgliteDatabase(db: Database): db is PgliteDatabase {
  return db.backend === 'pglite' && 'exclusive' in db;
}

export function isPostgresDatabase(db: Database): db is PostgresDatabase {
  return db.backend === 'postgres' && 'connectionString' in db;
}

/** A consistent snapshot of the whole database as pg_dump output (one snapshot: pg_dump's own). */
export async function dumpDatabase(db: Database): Promise<Readable> {
  if (isPgliteDatabase(db)) return dumpPglite(db);
  if (isPostgresDatabase(db)) return dumpPostgres(db.connectionString);
  throw new DumpError('This database cannot be dumped: it is neither PGlite nor a PostgreSQL server.');
}

/**
 * PGlite's pg_dump hands its output back as one JavaScript string, which cannot exceed ~512 MB;
 * so the schema, each table's rows and the indexes are dumped one after another and
 * concatenated. All of it runs under the exclusive lock, so nothing writes in between: the
 * parts form one consistent snapshot, and their concatenation is what one pg_dump would print.
 */
async function dumpPglite(db: PgliteDatabase): Promise<Readable> {
  const { pgDump } = await import('@electric-sql/pglite-tools/pg_dump');
  const parts = await db.exclusive(async (pglite) => {
    const { rows } = await pglite.query<{ name: string }>(
      `/* dumpTables */ SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
    );
    const sections = [
      ['--section=pre-data'],
      ...rows.map((r) => ['--section=data', `--table=public."${r.name.replaceAll('"', '""')}"`]),
      ['--section=post-data'],
    ];
    const files: Buffer[] = [];
    for (const section of sections) {
      const file = await pgDump({ pg: pglite, args: [...DUMP_ARGS, ...section] });
      // pg_dump ends by hanging up, which on a server ends its read-only transaction; PGlite's
      // pg_dump shares the one session and leaves that transaction open, so the next write
      // would fail as read-only. COMMIT, not ROLLBACK: inside it the tools restored the
      // search_path pg_dump had emptied before it began, and a rollback would empty it again.
      await pglite.exec('COMMIT');
      files.push(Buffer.from(await file.arrayBuffer()));
    }
    return files;
  });
  return Readable.from(parts);
}

/**
 * Native pg_dump, the one matching the server's major version when Debian has it installed
 * side by side (`/usr/lib/postgresql/N/bin`), else the first on PATH; an older pg_dump than the
 * server is refused before it starts. The password travels in the environment, not in argv.
 */
export async function dumpPostgres(connectionString: string): Promise<Readable> {
  const serverMajor = await serverMajorVersion(connectionString);
  const binary = pgDumpBinary(serverMajor);
  const url = new URL(connectionString);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const child = spawn(binary, [...DUMP_ARGS, `--dbname=${url.toString()}`], {
    env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const out = new Readable({ read() {} });
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.on('error', (error) => out.destroy(new DumpError(`pg_dump could not start: ${error.message}`)));
  child.on('close', (code) => {
    if (code === 0) out.push(null);
    else out.destroy(new DumpError(`pg_dump failed (exit ${code}): ${stderr.trim()}`));
  });
  return out;
}

export async function serverMajorVersion(connectionString: string): Promise<number> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>(`/* serverVersion */ SHOW server_version_num`);
    return Math.floor(Number(rows[0]!.v) / 10000);
  } finally {
    await client.end();
  }
}

export function pgDumpBinary(serverMajor: number): string {
  const sideBySide = `/usr/lib/postgresql/${serverMajor}/bin/pg_dump`;
  const binary = existsSync(sideBySide) ? sideBySide : 'pg_dump';
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  const major = Number(/\b(\d+)\.\d+/.exec(version.stdout ?? '')?.[1]);
  if (version.error || !Number.isFinite(major)) {
    throw new DumpError(
      `pg_dump is not installed; on Debian: apt-get install postgresql-client-${serverMajor}.`,
    );
  }
  if (major < serverMajor) {
    throw new DumpError(
      `pg_dump ${major} cannot dump a PostgreSQL ${serverMajor} server; install postgresql-client-${serverMajor}.`,
    );
  }
  return binary;
}
