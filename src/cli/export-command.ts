import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import type { Database } from '../db/database.js';
import type { NamespaceDigest } from '../modules/portability/index.js';
import { namespaceSchema } from '../kernel/validation.js';
import { UsageError, parseArgs } from './args.js';
import {
  type Location,
  configuredLocation,
  describeLocation,
  maskedUrl,
  openLocation,
} from './database-location.js';
import { createProgress, formatSeconds } from './progress.js';

const USAGE = `Usage: memgate export [--namespace NS]... --out FILE.jsonl
       memgate export [--namespace NS]... --checksum
  Exports namespaces (all by default) as JSON Lines (docs/export-format.md), or prints one
  order-independent digest per namespace: equal digests mean equal memory.`;

/** Every `--namespace` value, in order (the option may repeat). */
export function namespacesOf(args: readonly string[]): string[] | null {
  const found: string[] = [];
  args.forEach((arg, i) => {
    if (arg === '--namespace') found.push(args[i + 1] ?? '');
    else if (arg.startsWith('--namespace=')) found.push(arg.slice('--namespace='.length));
  });
  for (const ns of found) {
    const checked = namespaceSchema.safeParse(ns);
    if (!checked.success)
      throw new UsageError(`--namespace ${JSON.stringify(ns)}: ${checked.error.issues[0]?.message}`);
  }
  return found.length ? [...new Set(found)] : null;
}

export async function exportTo(
  location: Location,
  namespaces: string[] | null,
  out: string,
): Promise<{ records: number; namespaces: string[]; ms: number }> {
  // Most of the gateway: loaded by the commands that use it, not by every start of the CLI.
  const { writeExport } = await import('../modules/portability/index.js');
  const started = performance.now();
  const partial = `${out}.partial`;
  const db = await openLocation(location, true);
  const file = createWriteStream(partial);
  const progress = createProgress('export', process.stderr, 'records');
  try {
    const result = await writeExport(
      db,
      namespaces,
      async (line) => {
        if (!file.write(line)) await once(file, 'drain');
      },
      (done, total) => progress.update(done, total),
    );
    file.end();
    await once(file, 'finish');
    renameSync(partial, out);
    return { ...result, ms: performance.now() - started };
  } catch (error) {
    file.destroy();
    rmSync(partial, { force: true });
    throw error;
  } finally {
    progress.done();
    await db.close();
  }
}

export async function digestsOf(
  db: Database,
  namespaces: string[] | null,
  label = 'checksum',
): Promise<NamespaceDigest[]> {
  const { checksums } = await import('../modules/portability/index.js');
  const progress = createProgress(label, process.stderr, 'records');
  try {
    return await checksums(db, namespaces, (done, total) => progress.update(done, total));
  } finally {
    progress.done();
  }
}

export async function locationDigests(
  location: Location,
  namespaces: string[] | null,
  label?: string,
): Promise<NamespaceDigest[]> {
  const db = await openLocation(location, true);
  try {
    return await digestsOf(db, namespaces, label);
  } finally {
    await db.close();
  }
}

export function formatDigests(digests: readonly NamespaceDigest[]): string {
  return digests.map((d) => `${d.digest}  ${d.namespace}  ${d.records} records`).join('\n');
}

registerCommand('export', {
  summary: 'export namespaces as JSON Lines (--out FILE.jsonl), or print their digests (--checksum)',
  async run(args) {
    let namespaces: string[] | null;
    let out: string | true | undefined;
    let checksum: boolean;
    try {
      const { positional, options } = parseArgs(args, ['out', 'namespace']);
      if (options.has('help')) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
      namespaces = namespacesOf(args);
      out = options.get('out');
      checksum = options.has('checksum');
      if (!checksum && typeof out !== 'string')
        throw new UsageError('--out FILE.jsonl (or --checksum) is required');
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const location = configuredLocation(parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: 'warn' }));
    // A failure names the database it was reading: DATABASE_URL may not be the one meant.
    const naming = (error: Error): never => {
      const named = location.databaseUrl ? maskedUrl(location.databaseUrl) : resolve(location.dataDir ?? '.');
      if (error.message.includes(named)) throw error;
      throw new Error(`${describeLocation(location)}: ${error.message}`);
    };
    if (checksum) {
      const digests = await locationDigests(location, namespaces).catch(naming);
      process.stdout.write(`${formatDigests(digests)}\n`);
      return 0;
    }
    const result = await exportTo(location, namespaces, out as string).catch(naming);
    process.stdout.write(
      `exported ${result.namespaces.length} namespaces (${result.records} records) of ${describeLocation(location)} to ${out} in ${formatSeconds(result.ms / 1000)}\n`,
    );
    return 0;
  },
});
