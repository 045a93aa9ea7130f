import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import type { readEmbeddingSettings } from '../kernel/store/migrate.js';
import type { NamespaceDigest } from '../modules/portability/index.js';
import { UsageError, parseArgs } from './args.js';
import { restoreInto } from './backup-command.js';
import {
  type Location,
  describeLocation,
  embeddedDatabaseExists,
  maskedUrl,
  openLocation,
  parseLocation,
  sameDatabase,
} from './database-location.js';
import { locationDigests } from './export-command.js';
import { NAMESPACE_USAGE, parseNamespaceMove, runNamespaceMove } from './move-namespace.js';
import { formatSeconds } from './progress.js';

const USAGE = `Usage: memgate move --to postgres://USER:PASSWORD@HOST:PORT/DB [--from SOURCE]
       memgate move --to NEW_FOLDER [--from SOURCE]
  Copies the whole database from SOURCE to the target: backup, restore, then the digests of
  both sides are compared. SOURCE is left unchanged. Stop the gateway first.
  --to    the target: an empty PostgreSQL ≥ 15 database with pgvector, or a new embedded folder
  --from  the source: an embedded folder or a postgres:// URL (default: DATABASE_URL when it is
          set, else the embedded folder MEMGATE_DATA_DIR, ./.memgate unless set)

${NAMESPACE_USAGE}`;

/** A move that cannot start or did not finish; its message names both sides. */
export class MoveError extends Error {}

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

/** "embedded folder /srv/memgate (MEMGATE_DATA_DIR)": a side with what named it. */
export function side(location: Location): string {
  return `${describeLocation(location)}${location.origin ? ` (${location.origin})` : ''}`;
}

/** The source: `--from`, else the database the gateway would use in this environment. */
export function moveSource(from: string | undefined, env: NodeJS.ProcessEnv): Location {
  if (from !== undefined) return { ...parseLocation(from), origin: '--from' };
  const config = parseConfig({ ...env, MEMGATE_LOG_LEVEL: 'warn' });
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl, origin: 'DATABASE_URL' };
  return {
    dataDir: config.dataDir,
    origin: env.MEMGATE_DATA_DIR ? 'MEMGATE_DATA_DIR' : 'default data folder',
  };
}

/** Refusals before anything is read or written: the same database twice, an occupied folder. */
export function checkSides(source: Location, target: Location): void {
  if (sameDatabase(source, target)) {
    throw new UsageError(
      `The source and the target are the same database: ${side(source)} and ${side(target)}. ` +
        `--to must name another, empty database.${sourceHint(source)}`,
    );
  }
  if (target.dataDir && embeddedDatabaseExists(target.dataDir)) {
    throw new MoveError(
      `The target, ${side(target)}, already holds a database: move into a new folder or an empty PostgreSQL database.`,
    );
  }
}

/** The source must hold a memgate database; the message says which one was looked at, and why. */
async function checkSource(source: Location): Promise<void> {
  if (source.dataDir && !embeddedDatabaseExists(source.dataDir)) {
    throw new MoveError(`Nothing to move: the source, ${side(source)}, holds no embedded database.`);
  }
  let settings: Awaited<ReturnType<typeof readEmbeddingSettings>>;
  try {
    const { readEmbeddingSettings: readSettings } = await import('../kernel/store/migrate.js');
    const db = await openLocation(source, true);
    try {
      settings = await readSettings(db);
    } finally {
      await db.close();
    }
  } catch (error) {
    throw new MoveError(`Cannot read the source, ${side(source)}: ${reasonOf(error)}`);
  }
  if (settings) return;
  throw new MoveError(
    `Nothing to move: the source, ${side(source)}, has no memgate schema.${sourceHint(source)}`,
  );
}

/** An error's words; a refused connection to `localhost` is an AggregateError with none of its own. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  const inner = error instanceof AggregateError ? error.errors.map(reasonOf).join('; ') : '';
  return inner || (error as { code?: string }).code || error.name;
}

/** Why a server is the source when the user may have meant a folder. */
function sourceHint(source: Location): string {
  return source.origin === 'DATABASE_URL'
    ? '\nThe source is DATABASE_URL because it is set in this environment; to move an embedded folder, name it: memgate move --from FOLDER --to …'
    : '';
}

export async function moveDatabase(
  source: Location,
  target: Location,
): Promise<{ digests: NamespaceDigest[]; differences: string[]; ms: number }> {
  const [{ dumpDatabase }, { TargetNotEmptyError }] = await Promise.all([
    import('../db/dump.js'),
    import('../db/restore.js'),
  ]);
  const started = performance.now();
  checkSides(source, target);
  await checkSource(source);
  const before = await locationDigests(source, null, 'checksum (source)');
  const db = await openLocation(source, true);
  try {
    await restoreInto(target, await dumpDatabase(db), undefined, 'copy').catch((error: Error) => {
      if (error instanceof TargetNotEmptyError) {
        throw new MoveError(
          `The target, ${side(target)}, already has tables: move into an empty database. Nothing was written.`,
        );
      }
      throw new MoveError(`Copying into the target, ${side(target)}, failed: ${reasonOf(error)}`);
    });
  } finally {
    await db.close();
  }
  const after = await locationDigests(target, null, 'checksum (target)');
  return { digests: after, differences: digestDifferences(before, after), ms: performance.now() - started };
}

/** How to start on the target; a URL's password stays masked (it is the one given to --to). */
export function startInstructions(target: Location): string {
  if (target.databaseUrl) {
    const url = maskedUrl(target.databaseUrl);
    const note = url === target.databaseUrl ? '' : ' (*** is the password given to --to)';
    return [
      `Start the gateway on the server with the same settings plus DATABASE_URL${note}:`,
      `  DATABASE_URL='${url}' npm start`,
      `  (or: DATABASE_URL='${url}' npx memgate serve)`,
    ].join('\n');
  }
  return `Start the gateway on the new folder:\n  MEMGATE_DATA_DIR='${target.dataDir}' npm start`;
}

function parseMoveArgs(args: string[]): { from: string | undefined; to: string } | 'help' | 'namespace' {
  const { positional, options } = parseArgs(args, ['to', 'from', 'namespace', 'timeout']);
  if (options.has('help')) return 'help';
  if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
  if (options.has('namespace')) return 'namespace';
  const unknown = [...options.keys()].find((name) => name !== 'to' && name !== 'from');
  if (unknown) throw new UsageError(`unknown option --${unknown}`);
  const to = options.get('to');
  if (typeof to !== 'string') throw new UsageError('--to is required');
  const from = options.get('from');
  if (from === true) throw new UsageError('--from needs a value');
  return { from, to };
}

function records(n: number): string {
  return `${n} ${n === 1 ? 'record' : 'records'}`;
}

registerCommand('move', {
  summary:
    'copy the whole database into PostgreSQL or a new folder (--to …, --from …) and verify it; with --namespace NS, move one namespace to another server by logical replication',
  async run(args) {
    let source: Location;
    let target: Location;
    try {
      const parsed = parseMoveArgs(args);
      if (parsed === 'help') {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (parsed === 'namespace') {
        const { options } = parseArgs(args, ['to', 'from', 'namespace', 'timeout']);
        return await runNamespaceMove(parseNamespaceMove(options, process.env));
      }
      source = moveSource(parsed.from, process.env);
      target = { ...parseLocation(parsed.to), origin: '--to' };
      checkSides(source, target);
    } catch (error) {
      if (error instanceof MoveError) {
        process.stderr.write(`${error.message}\n`);
        return 1;
      }
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`moving ${side(source)} → ${side(target)}\n`);
    let result: Awaited<ReturnType<typeof moveDatabase>>;
    try {
      result = await moveDatabase(source, target);
    } catch (error) {
      if (!(error instanceof MoveError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    const from = describeLocation(source);
    const to = describeLocation(target);
    if (result.differences.length > 0) {
      process.stderr.write(
        `copied ${from} to ${to}, but the digests differ for: ${result.differences.join(', ')}.\nDo not switch over; report this as a bug.\n`,
      );
      return 1;
    }
    const counts = result.digests.map((d) => `${d.namespace} (${records(d.records)})`).join(', ');
    process.stdout.write(
      [
        `moved ${from} → ${to} in ${formatSeconds(result.ms / 1000)}`,
        `digests equal on both sides: ${counts || 'no namespaces'}`,
        startInstructions(target),
        `The source, ${from}, is unchanged; remove it once the gateway runs on the new database.`,
        '',
      ].join('\n'),
    );
    return 0;
  },
});
