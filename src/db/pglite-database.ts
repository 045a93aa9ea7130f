import { withChangeOutbox } from './change-outbox.js';
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { type Database, type QueryResult, type Queryable, toParam } from './database.js';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { Mutex } from './mutex.js';

export interface PgliteOptions {
  /** A directory to persist into; undefined keeps the database in memory (tests). */
  dataDir?: string;
  /** A dump made by `dumpDataDir`, to start from a migrated template without running initdb. */
  loadDataDir?: Blob | File;
}

export interface PgliteDatabase extends Database {
  readonly backend: 'pglite';
  pglite: PGlite;
  /** Runs `fn` with the connection to itself (nothing interleaves): what pg_dump's WASM build needs. */
  exclusive<T>(fn: (pglite: PGlite) => Promise<T>): Promise<T>;
}

export async function openPglite(options: PgliteOptions): Promise<PgliteDatabase> {
  let folderLock: DataDirLock | undefined;
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    // Before PGlite touches the files: a second process must not even replay the WAL.
    folderLock = lockDataDir(options.dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({
      dataDir: options.dataDir,
      loadDataDir: options.loadDataDir,
      extensions: { vector, pg_trgm },
      relaxedDurability: false,
    });
  } catch (error) {
    folderLock?.release();
    throw error;
  }
  // The default 64 MB makes HNSW builds ~4x slower; the WASM heap allows this comfortably.
  await pglite.exec(`SET maintenance_work_mem = '512MB'`);
  const lock = new Mutex();

  const run = async <R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> => {
    const result = await pglite.query<R>(sql, params ? params.map(toParam) : []);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  };

  return {
    backend: 'pglite',
    pglite,
    load: () => ({ queue: { depth: lock.depth } }),
    observeQueueWait: (listener) => {
      lock.onWait = listener;
    },
    query: (sql, params) => lock.run(() => run(sql, params)),
    transaction: (_name, fn) =>
      lock.run(async () => {
        await pglite.exec('BEGIN');
        const tx: Queryable = {
          query: (sql, params) => run(sql, params),
          // PGlite reads COPY input from a Blob named /dev/blob in the statement.
          copyFrom: async (sql, data) => {
            await pglite.query(sql.replace(/FROM STDIN/i, "FROM '/dev/blob'"), [], {
              blob: new Blob([typeof data === 'string' ? data : new Uint8Array(data)]),
            });
          },
        };
        try {
          const value = await withChangeOutbox(tx, () => fn(tx));
          await pglite.exec('COMMIT');
          return value;
        } catch (error) {
          await pglite.exec('ROLLBACK');
          throw error;
        }
      }),
    exec: (sql) =>
      lock.run(async () => {
        await pglite.exec(sql);
      }),
    exclusive: (fn) => lock.run(() => fn(pglite)),
    // PGlite delivers a committed transaction's NOTIFYs in-process, after the statement that
    // committed; LISTEN itself is a statement, so it waits its turn like any other.
    listen: async (channel, onPayload) => {
      const unlisten = await lock.run(() => pglite.listen(channel, onPayload));
      return () => lock.run(() => unlisten());
    },
    close: () =>
      lock.run(async () => {
        try {
          await pglite.close();
        } finally {
          folderLock?.release();
        }
      }),
  };
}
