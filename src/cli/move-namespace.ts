import { z } from 'zod';
import type { Database } from '../db/database.js';
import { pingDatabase } from '../kernel/store/migrate.js';
import { namespaceSchema } from '../kernel/validation.js';
import type { NamespaceMoveResult } from '../modules/portability/index.js';
import { UsageError } from './args.js';
import {
  type Location,
  describeLocation,
  openLocation,
  parseLocation,
  sameDatabase,
} from './database-location.js';
import { formatSeconds } from './progress.js';

export const NAMESPACE_USAGE = `Usage: memgate move --namespace NS --to postgres://USER:PASSWORD@HOST:PORT/DB [--drop-source] [--timeout SECONDS]
  Moves one namespace from the server DATABASE_URL names (or --from URL) to the server --to
  names, through PostgreSQL's logical replication, while the gateway keeps running:
    1. runs memgate's migrations on the target;
    2. publishes the namespace's rows of every tenant table on the source (a row filter);
    3. subscribes on the target (initial copy), waits until every table is copied and the
       target has caught up with the source;
    4. makes the namespace read-only on the source (writes to it fail from then on), waits for
       the final catch-up, and compares the namespace's digests (export --checksum, and the
       search columns) on both sides: if they differ, everything is undone and the source
       stays authoritative;
    5. advances the target's id sequences past the copied ids, drops the subscription, the
       publication and the replication slots.
  Afterwards the namespace stays on the source, read-only; --drop-source deletes it there.
  Ctrl-C (SIGINT, SIGTERM) before the copy is verified undoes the move. docs/namespace-move.md
  Needs wal_level = logical on the source, a superuser on both, and the target server able to
  reach the source at the source's URL.
  --namespace    the namespace to move
  --to           the target PostgreSQL database (created tables: memgate's migrations)
  --from         the source (default: DATABASE_URL)
  --drop-source  delete the namespace from the source once the target holds it, verified
  --timeout      longest wait, in seconds, for the initial copy and each catch-up (default 600)`;

const optionsSchema = z.object({
  namespace: namespaceSchema,
  to: z.string().regex(/^postgres(ql)?:\/\//, 'a namespace moves to a postgres:// URL'),
  from: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'the source of a namespace move is a postgres:// URL')
    .optional(),
  dropSource: z.boolean(),
  timeoutSeconds: z.coerce.number().int().positive().default(600),
});
export type NamespaceMoveArgs = z.infer<typeof optionsSchema>;

/** The options of a namespace move, checked; a wrong one is a UsageError naming it. */
export function parseNamespaceMove(
  options: Map<string, string | true>,
  env: NodeJS.ProcessEnv,
): NamespaceMoveArgs {
  const allowed = new Set(['namespace', 'to', 'from', 'drop-source', 'timeout']);
  const unknown = [...options.keys()].find((name) => !allowed.has(name));
  if (unknown) throw new UsageError(`unknown option --${unknown}`);
  const value = (name: string) => {
    const v = options.get(name);
    if (v === true) throw new UsageError(`--${name} needs a value`);
    return v;
  };
  const parsed = optionsSchema.safeParse({
    namespace: value('namespace'),
    to: value('to'),
    from: value('from') ?? (env.DATABASE_URL || undefined),
    dropSource: options.get('drop-source') === true,
    timeoutSeconds: value('timeout'),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? '');
    const option = { dropSource: 'drop-source', timeoutSeconds: 'timeout' }[name] ?? name;
    const given = issue.code === 'invalid_type' && issue.input === undefined;
    throw new UsageError(given ? `--${option} is required` : `--${option}: ${issue.message}`);
  }
  if (!parsed.data.from) throw new UsageError('the source is DATABASE_URL (or --from URL): neither is set');
  return parsed.data;
}

function side(location: Location, origin: string): string {
  return `${describeLocation(location)} (${origin})`;
}

/** Opens a side and checks that it answers; the error names it. */
async function openSide(location: Location, origin: string): Promise<Database> {
  let db: Database | undefined;
  try {
    db = await openLocation(location, true);
    await pingDatabase(db);
    return db;
  } catch (error) {
    await db?.close().catch(() => undefined);
    const reason = error instanceof Error ? error.message || error.name : String(error);
    throw new Error(`Cannot reach ${side(location, origin)}: ${reason}`);
  }
}

function summary(args: NamespaceMoveArgs, to: Location, result: NamespaceMoveResult, ms: number): string {
  const phases = Object.entries(result.phases)
    .map(([name, t]) => `${name} ${formatSeconds(t / 1000)}`)
    .join(', ');
  return [
    `moved namespace ${args.namespace} (${result.records} records) to ${describeLocation(to)} in ${formatSeconds(ms / 1000)} (${phases})`,
    `digest ${result.digest}, equal on both sides`,
    result.droppedFromSource === null
      ? "The source keeps a read-only copy: point the namespace's clients at the target, then run with --drop-source next time or delete it by hand (docs/namespace-move.md)."
      : `The source no longer holds the namespace (${result.droppedFromSource} rows deleted).`,
    '',
  ].join('\n');
}

/**
 * SIGINT and SIGTERM abort the move, which then undoes itself (slots, publication, fence, the
 * target's partial copy) and exits 1; a second signal exits at once, leaving cleanup to a re-run.
 */
function interruptible(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(`move: ${name}: undoing the move (a second ${name} exits at once)\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** `memgate move --namespace …`: exit 0 moved, 1 refused or undone, 2 bad usage (handled by the caller). */
export async function runNamespaceMove(args: NamespaceMoveArgs): Promise<number> {
  const { moveNamespace, NamespaceMoveError } = await import('../modules/portability/index.js');
  const from = parseLocation(args.from!);
  const to = parseLocation(args.to);
  if (sameDatabase(from, to)) {
    process.stderr.write(`The source and the target are the same database: ${describeLocation(from)}.\n`);
    return 1;
  }
  const fromOrigin = process.argv.includes('--from') ? '--from' : 'DATABASE_URL';
  process.stderr.write(
    `moving namespace ${args.namespace}: ${side(from, fromOrigin)} → ${side(to, '--to')}\n`,
  );
  const started = performance.now();
  let source: Database | undefined;
  let target: Database | undefined;
  const interrupt = interruptible();
  try {
    source = await openSide(from, fromOrigin);
    target = await openSide(to, '--to');
    const result = await moveNamespace(source, target, {
      namespace: args.namespace,
      sourceConninfo: args.from!,
      dropSource: args.dropSource,
      timeoutMs: args.timeoutSeconds * 1000,
      report: (line) => process.stderr.write(`move: ${line}\n`),
      signal: interrupt.signal,
    });
    process.stdout.write(summary(args, to, result, performance.now() - started));
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const known = error instanceof NamespaceMoveError || message.startsWith('Cannot reach');
    process.stderr.write(`${known ? '' : 'move failed: '}${message}\n`);
    return 1;
  } finally {
    interrupt.release();
    await source?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
  }
}
