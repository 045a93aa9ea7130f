import {
  closeSync,
  createReadStream,
  createWriteStream,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import type { restoreDump } from '../db/restore.js';
import { UsageError, parseArgs } from './args.js';
import { type Location, configuredLocation, describeLocation, openLocation } from './database-location.js';
import { createProgress, formatBytes, formatSeconds } from './progress.js';

const BACKUP_USAGE = `Usage: memgate backup --out FILE [--url http://HOST:PORT]
  Writes a pg_dump of the whole database (DATABASE_URL, or the embedded MEMGATE_DATA_DIR).
  --url asks a running gateway for it instead (needed while a gateway holds the embedded
  folder); the bearer token of an admin principal is read from MEMGATE_TOKEN.`;
const RESTORE_USAGE = `Usage: memgate restore FILE
  Loads a backup into a fresh database (DATABASE_URL, or the embedded MEMGATE_DATA_DIR),
  then applies any migrations newer than the backup.`;

function usage(run: (args: string[]) => Promise<number>, text: string) {
  return async (args: string[]): Promise<number> => {
    if (args.includes('--help')) {
      process.stdout.write(`${text}\n`);
      return 0;
    }
    try {
      return await run(args);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${text}\n`);
      return 2;
    }
  };
}

/** Counts bytes going through, for the progress line. */
function byteCounter(onBytes: (total: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      onBytes(total);
      callback(null, chunk);
    },
  });
}

/** A gateway's /admin/backup as a stream; HTTP errors become messages with their code. */
export async function fetchBackup(gatewayUrl: string, token: string | undefined): Promise<Readable> {
  const base = gatewayUrl.replace(/\/graphql\/?$/, '').replace(/\/$/, '');
  const response = await fetch(`${base}/admin/backup`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => null)) as {
      errors?: { message: string; extensions?: { code?: string } }[];
    } | null;
    const error = body?.errors?.[0];
    throw new Error(
      `The gateway refused the backup (HTTP ${response.status}${error?.extensions?.code ? ` ${error.extensions.code}` : ''}): ${error?.message ?? response.statusText}`,
    );
  }
  return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
}

/** True when the file ends with pg_dump's closing line (a cut-off backup does not). */
export async function isCompleteDump(file: string): Promise<boolean> {
  // The dump and restore code (with the PostgreSQL driver) loads when a backup command runs,
  // not at every start of the CLI.
  const { DUMP_COMPLETE } = await import('../db/dump.js');
  const size = statSync(file).size;
  const length = Math.min(size, 512);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').includes(DUMP_COMPLETE);
}

/** Writes a backup of `source` (or of the gateway at `url`) to `out`, atomically. */
export async function backupTo(
  out: string,
  source: { location: Location } | { url: string; token: string | undefined },
): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  const partial = `${out}.partial`;
  const progress = createProgress('backup', process.stderr, 'bytes');
  let bytes = 0;
  const onBytes = (n: number) => {
    bytes = n;
    progress.update(n);
  };
  try {
    if ('url' in source) {
      await pipeline(
        await fetchBackup(source.url, source.token),
        byteCounter(onBytes),
        createWriteStream(partial),
      );
    } else {
      const db = await openLocation(source.location, true).catch((error: Error) => {
        if (!source.location.dataDir) throw error;
        throw new Error(
          `${error.message}\nIf a gateway is running on ${source.location.dataDir}, back up through it: memgate backup --out ${out} --url http://HOST:PORT`,
        );
      });
      try {
        const { dumpDatabase } = await import('../db/dump.js');
        await pipeline(await dumpDatabase(db), byteCounter(onBytes), createWriteStream(partial));
      } finally {
        await db.close();
      }
    }
    if (!(await isCompleteDump(partial)))
      throw new Error('The backup stream ended early; no backup was written.');
    renameSync(partial, out);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    progress.done();
  }
  return { bytes, ms: performance.now() - started };
}

/** Restores `input` into an empty `target`, then migrates it to this version of memgate. */
export async function restoreInto(
  target: Location,
  input: Readable,
  totalBytes?: number,
  label = 'restore',
): Promise<{ statements: number; skipped: string[]; migrations: string[] }> {
  const [{ restoreDump: restore }, { migrate, readEmbeddingSettings }] = await Promise.all([
    import('../db/restore.js'),
    import('../kernel/store/migrate.js'),
  ]);
  const db = await openLocation(target, false);
  // Started once the target is open: a new folder's initdb is no part of the copy's rate.
  const progress = createProgress(label, process.stderr, 'bytes');
  let read = 0;
  let summary: Awaited<ReturnType<typeof restoreDump>>;
  try {
    summary = await restore(db, input, (n) => {
      read += n;
      progress.update(read, totalBytes);
    });
  } finally {
    await db.close();
    progress.done();
  }
  // A fresh connection: the dump leaves session settings (an empty search_path) behind.
  const migrated = await openLocation(target, false);
  try {
    const embedding = await readEmbeddingSettings(migrated);
    if (!embedding) throw new Error('The backup has no memgate schema (memgate_settings is missing).');
    const migrations = await migrate(migrated, embedding);
    return { ...summary, migrations };
  } finally {
    await migrated.close();
  }
}

registerCommand('backup', {
  summary: 'write a pg_dump backup of the whole database (--out FILE; --url to ask a running gateway)',
  run: usage(async (args) => {
    const { positional, options } = parseArgs(args, ['out', 'url']);
    const out = options.get('out');
    if (typeof out !== 'string') throw new UsageError('--out FILE is required');
    if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
    const url = options.get('url');
    if (url === true) throw new UsageError('--url needs a value');
    const config = parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: 'warn' });
    const source = url ? { url, token: process.env.MEMGATE_TOKEN } : { location: configuredLocation(config) };
    const { bytes, ms } = await backupTo(out, source);
    const from = 'url' in source ? `the gateway at ${source.url}` : describeLocation(source.location);
    process.stdout.write(
      `backup of ${from} written to ${out}: ${formatBytes(bytes)} in ${formatSeconds(ms / 1000)}\n`,
    );
    return 0;
  }, BACKUP_USAGE),
});

registerCommand('restore', {
  summary: 'load a backup into a fresh database (DATABASE_URL or MEMGATE_DATA_DIR)',
  run: usage(async (args) => {
    const { positional } = parseArgs(args, []);
    if (positional.length !== 1) throw new UsageError('expected exactly one FILE');
    const file = positional[0]!;
    const size = statSync(file).size;
    if (!(await isCompleteDump(file)))
      throw new Error(`${file} is not a complete memgate backup (pg_dump output).`);
    const target = configuredLocation(parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: 'warn' }));
    const started = performance.now();
    const summary = await restoreInto(target, createReadStream(file), size);
    const lines = [
      `restored ${file} into ${describeLocation(target)}: ${summary.statements} statements in ${formatSeconds((performance.now() - started) / 1000)}`,
      ...summary.skipped.map((s) => `skipped (unknown to this server): ${s}`),
      summary.migrations.length
        ? `migrations applied after the restore: ${summary.migrations.join(', ')}`
        : '',
    ];
    process.stdout.write(`${lines.filter(Boolean).join('\n')}\n`);
    return 0;
  }, RESTORE_USAGE),
});
