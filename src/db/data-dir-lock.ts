import { linkSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * One process per embedded database: PGlite keeps its own buffers and WAL in memory, so two
 * processes on one folder each acknowledge writes the other overwrites. The lock is a file
 * beside the database folder holding the owner's pid and start time; it is created atomically
 * (link fails when it exists), removed on close or exit, and taken over when its pid is gone.
 */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

export interface LockHolder {
  pid: number;
  startedAt: string;
  command: string;
  /** Where a gateway holding the folder answers (http://HOST:PORT), once it listens. */
  url?: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly folder: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the data folder ${folder} is in use by memgate process ${holder.pid} ` +
        `(${holder.command}, started ${holder.startedAt}); stop that process first, ` +
        'or send your writes through its API (memgate import --url http://HOST:PORT/graphql).',
    );
    this.name = 'DataDirLockedError';
  }
}

export function lockFilePath(folder: string): string {
  return join(dirname(folder), `${basename(folder)}.lock`);
}

/** Takes the lock for `folder` or throws DataDirLockedError naming the process that holds it. */
export function lockDataDir(folder: string): DataDirLock {
  const path = lockFilePath(folder);
  const mine: LockHolder = {
    pid: process.pid,
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    command: commandLine(),
  };
  // Written under a private name, then linked into place: the lock appears complete or not at all.
  const draft = `${path}.${process.pid}.${Date.now()}`;
  writeFileSync(draft, `${JSON.stringify(mine)}\n`);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(draft, path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
      }
      const holder = readHolder(path);
      if (holder && isAlive(holder.pid)) throw new DataDirLockedError(folder, holder);
      removeStale(path);
    }
  } finally {
    rmSync(draft, { force: true });
  }

  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    if (readHolder(path)?.pid === process.pid) rmSync(path, { force: true });
  };
  process.on('exit', release);
  return { path, release };
}

/**
 * The live process holding `folder`, if another one does: what its lock file records. Only a
 * look (nothing is taken), for a process that wants to say so before it tries.
 */
export function folderHolder(folder: string): LockHolder | undefined {
  const holder = readHolder(lockFilePath(folder));
  return holder && holder.pid !== process.pid && isAlive(holder.pid) ? holder : undefined;
}

/**
 * Adds the address a gateway listens on to the lock it holds, so that a process refused the
 * folder can say where to reach it instead. Replaced by rename: readers see the old file or
 * the new one, never half of one.
 */
export function recordLockAddress(folder: string, url: string): void {
  const path = lockFilePath(folder);
  const holder = readHolder(path);
  if (holder?.pid !== process.pid) return;
  const draft = `${path}.${process.pid}.${Date.now()}`;
  try {
    writeFileSync(draft, `${JSON.stringify({ ...holder, url })}\n`);
    renameSync(draft, path);
  } catch {
    rmSync(draft, { force: true }); // the address is a courtesy; the lock itself stands
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid)) return undefined;
    return {
      pid: parsed.pid,
      startedAt: String(parsed.startedAt ?? 'unknown'),
      command: String(parsed.command ?? 'memgate'),
      ...(typeof parsed.url === 'string' ? { url: parsed.url } : {}),
    };
  } catch {
    return undefined; // vanished or unreadable: treated as stale
  }
}

/** Signal 0 probes without signalling: ESRCH means the pid is gone; EPERM means it lives. */
function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Moves the stale file aside first, so two processes taking it over cannot delete each other's lock. */
function removeStale(path: string): void {
  const aside = `${path}.stale.${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else moved it already; the next link attempt decides
  }
  const moved = readHolder(aside);
  if (moved && isAlive(moved.pid)) {
    // A live owner linked its lock between our read and our rename: give it back.
    try {
      linkSync(aside, path);
    } catch {
      // it re-appeared meanwhile; either way the live owner still holds a lock file
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // already gone
  }
}

function commandLine(): string {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const script = basename(process.argv[1] ?? 'memgate');
  return script === 'main.ts' || args.length === 0 ? 'memgate serve' : `memgate ${args[0]}`;
}
