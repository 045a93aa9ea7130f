import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import type { NamespaceDigest } from '../modules/portability/index.js';
import { UsageError, parseArgs } from './args.js';
import { restoreInto } from './backup-command.js';
import {
  type Location,
  configuredLocation,
  describeLocation,
  openLocation,
  parseLocation,
} from './database-location.js';
import { locationDigests } from './export-command.js';
import { formatSeconds } from './progress.js';

const USAGE = `Usage: memgate move --to postgres://USER:PASSWORD@HOST:PORT/DB
  Moves the whole database (the embedded MEMGATE_DATA_DIR, or DATABASE_URL) into an empty
  PostgreSQL ≥ 15 database with pgvector (or, given a folder, into a new embedded folder):
  backup, restore, then the digests of both sides are compared. Stop the gateway first.`;

/** Namespaces whose digests differ between the two sides (missing on one side counts). */
export function digestDifferences(
  before: readonly NamespaceDigest[],
  after: readonly NamespaceDigest[],
): string[] {
  const key = (d: NamespaceDigest) => `${d.digest} ${d.records}`;
  const a = new Map(before.map((d) => [d.namespace, key(d)]));
  const b = new Map(after.map((d) => [d.namespace, key(d)]));
  return [...new Set([...a.keys(), ...b.keys()])].filter((ns) => a.get(ns) !== b.get(ns)).sort();
}

export async function moveDatabase(
  source: Location,
  target: Location,
): Promise<{ digests: NamespaceDigest[]; differences: string[]; ms: number }> {
  const { dumpDatabase } = await import('../db/dump.js');
  const started = performance.now();
  const before = await locationDigests(source, null);
  const db = await openLocation(source, true);
  try {
    await restoreInto(target, await dumpDatabase(db));
  } finally {
    await db.close();
  }
  const after = await locationDigests(target, null);
  return { digests: after, differences: digestDifferences(before, after), ms: performance.now() - started };
}

export function startInstructions(target: Location): string {
  if (target.databaseUrl) {
    return [
      'Start the gateway on the server with the same settings plus DATABASE_URL:',
      `  DATABASE_URL='${target.databaseUrl}' npm start`,
      `  (or: DATABASE_URL='${target.databaseUrl}' npx memgate serve)`,
    ].join('\n');
  }
  return `Start the gateway on the new folder:\n  MEMGATE_DATA_DIR='${target.dataDir}' npm start`;
}

registerCommand('move', {
  summary: 'move the embedded database into PostgreSQL (--to postgres://…) and verify it',
  async run(args) {
    let to: string;
    try {
      const { positional, options } = parseArgs(args, ['to']);
      if (options.has('help')) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
      const value = options.get('to');
      if (typeof value !== 'string') throw new UsageError('--to is required');
      to = value;
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const source = configuredLocation(parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: 'warn' }));
    const target = parseLocation(to);
    const result = await moveDatabase(source, target);
    const counts = result.digests.map((d) => `${d.namespace} (${d.records} records)`).join(', ');
    if (result.differences.length > 0) {
      process.stderr.write(
        `moved ${describeLocation(source)} to ${describeLocation(target)}, but the digests differ for: ${result.differences.join(', ')}.\nDo not switch over; report this as a bug.\n`,
      );
      return 1;
    }
    process.stdout.write(
      [
        `moved ${describeLocation(source)} to ${describeLocation(target)} in ${formatSeconds(result.ms / 1000)}`,
        `digests equal on both sides: ${counts || 'no namespaces'}`,
        startInstructions(target),
        `${describeLocation(source)} is unchanged; remove it once the gateway runs on the new database.`,
        '',
      ].join('\n'),
    );
    return 0;
  },
});
