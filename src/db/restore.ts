import type { Readable } from 'node:stream';
import pg from 'pg';
import type { Database } from './database.js';
import { isPgliteDatabase, isPostgresDatabase } from './dump.js';
import { sqlStatements } from './sql-script.js';

export class RestoreError extends Error {}
/** The target has tables of its own: a restore never merges. */
export class TargetNotEmptyError extends RestoreError {}

export interface RestoreSummary {
  statements: number;
  /** `SET` statements of settings the target server does not know (a newer pg_dump's). */
  skipped: string[];
}

/** One connection for the whole restore: the dump sets session state (search_path) it relies on. */
interface ScriptConnection {
  run(sql: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** Statements are sent in batches of about this many characters (one round trip each). */
const BATCH_CHARS = 1 << 20;

/**
 * Replays a pg_dump plain script into an EMPTY database in one transaction: all of it or
 * nothing. Works across versions: a PostgreSQL 18 dump (PGlite) loads into 15 and back; `SET`s
 * of settings the target lacks (`transaction_timeout` before 17) are skipped and reported.
 */
export async function restoreDump(
  db: Database,
  input: Readable,
  onBytes?: (bytes: number) => void,
): Promise<RestoreSummary> {
  if (isPgliteDatabase(db)) {
    return db.exclusive((pglite) =>
      replay(
        {
          run: async (sql) => (await pglite.exec(sql)).flatMap((r) => r.rows as Record<string, unknown>[]),
          close: async () => undefined,
        },
        input,
        onBytes,
      ),
    );
  }
  if (isPostgresDatabase(db)) {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    const connection: ScriptConnection = {
      run: async (sql) => {
        const result = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(result) ? result : [result]).flatMap((r) => r.rows);
      },
      close: () => client.end(),
    };
    try {
      return await replay(connection, input, onBytes);
    } finally {
      await connection.close();
    }
  }
  throw new RestoreError('This database cannot be restored into.');
}

async function replay(
  connection: ScriptConnection,
  input: Readable,
  onBytes?: (bytes: number) => void,
): Promise<RestoreSummary> {
  await assertEmpty(connection);
  const known = new Set(
    (await connection.run(`/* knownSettings */ SELECT name FROM pg_settings`)).map((r) => String(r.name)),
  );
  const summary: RestoreSummary = { statements: 0, skipped: [] };
  let batch: string[] = [];
  let chars = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await connection.run(batch.join('\n'));
    batch = [];
    chars = 0;
  };
  await connection.run('BEGIN');
  try {
    for await (const statement of sqlStatements(input, onBytes)) {
      const setting = /^SET\s+([A-Za-z_][A-Za-z_0-9.]*)\s*(?:=|TO\b)/i.exec(statement)?.[1];
      if (setting && !known.has(setting.toLowerCase())) {
        summary.skipped.push(statement);
        continue;
      }
      batch.push(statement);
      chars += statement.length;
      summary.statements += 1;
      if (chars >= BATCH_CHARS) await flush();
    }
    await flush();
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw error instanceof RestoreError
      ? error
      : new RestoreError(`restore failed, nothing was written: ${(error as Error).message}`);
  }
  return summary;
}

/** A restore goes into a fresh database only: merging two databases is what export/import is for. */
async function assertEmpty(connection: ScriptConnection): Promise<void> {
  const rows = await connection.run(
    `/* userTables */ SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`,
  );
  if (Number(rows[0]?.n ?? 0) > 0) {
    throw new TargetNotEmptyError(
      'The target database already has tables: restore into a fresh database (a new MEMGATE_DATA_DIR, or an empty DATABASE_URL). To merge namespaces into an existing database, use `memgate export` and `memgate import`.',
    );
  }
}
