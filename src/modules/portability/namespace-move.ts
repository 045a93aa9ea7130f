import { createHash } from 'node:crypto';
import type { Database } from '../../db/database.js';
import { migrate, readEmbeddingSettings } from '../../kernel/store/migrate.js';
import { checksums } from './export-service.js';
import { appliedMigrations, insertRows, readDomainPacks, writableColumns } from './store/export-store.js';
import {
  WORK_QUEUE_TABLES,
  advanceSequences,
  analyzeTables,
  boundLockWait,
  confirmedLsn,
  createFence,
  createPublication,
  createSubscription,
  currentLsn,
  databaseName,
  deleteNamespaceRows,
  derivedDigest,
  dropFence,
  dropPublication,
  dropSlots,
  dropSubscription,
  fencedTables,
  namespaceRows,
  receivedLsn,
  slotDatabase,
  subscriptionOid,
  syncState,
  tenantTables,
  walLevel,
} from './store/replication-store.js';

/**
 * `memgate move --namespace NS --to URL`: one namespace from the source server to the target
 * server through PostgreSQL's logical replication — a row-filtered publication on the source, a
 * subscription (initial copy, then streaming) on the target — then a fenced cut-over: the
 * namespace is made read-only on the source, the target catches up to the source's last
 * write, and the namespace's digests (`export --checksum`, plus the derived search columns) must
 * be equal on both sides before the target's sequences are advanced and the replication objects
 * are dropped. Any failure drops the replication objects, the fence and the target's partial
 * copy: the source stays authoritative, as it was.
 */

/** A move that cannot start, or was undone; its message says why, and what state things are in. */
export class NamespaceMoveError extends Error {}

export interface NamespaceMoveOptions {
  namespace: string;
  /** The source as the target server reaches it (CREATE SUBSCRIPTION … CONNECTION). */
  sourceConninfo: string;
  dropSource: boolean;
  /** Longest wait for the initial copy and for each catch-up. */
  timeoutMs: number;
  report: (line: string) => void;
  /** Aborts the move (SIGINT, SIGTERM): the next wait throws, and the move is undone. */
  signal?: AbortSignal;
}

export interface NamespaceMoveResult {
  records: number;
  digest: string;
  tables: Record<string, number>;
  sequences: { sequence: string; value: string }[];
  droppedFromSource: number | null;
  phases: Record<string, number>;
}

/**
 * Names of the move's objects: the same for a namespace of a source database on every run, so a
 * re-run finds leftovers; the source database is in the hash because slot names are server-wide.
 */
export function moveNames(
  namespace: string,
  sourceDatabase: string,
): { publication: string; subscription: string; fence: string } {
  const id = createHash('sha256').update(`${sourceDatabase}\u0000${namespace}`).digest('hex').slice(0, 16);
  return {
    publication: `memgate_move_${id}`,
    subscription: `memgate_move_${id}`,
    fence: `memgate_fence_${id}`,
  };
}

interface Sides {
  source: Database;
  target: Database;
  tables: string[];
  names: ReturnType<typeof moveNames>;
  options: NamespaceMoveOptions;
  /** `pg_<oid>_sync_`, the prefix of the subscription's table-sync slots, once it exists. */
  syncPrefix: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A wait of the move itself: an abort (interrupt) ends it with an error, which undoes the move. */
async function pause(s: Sides, ms: number): Promise<void> {
  if (!s.options.signal?.aborted) await sleep(ms);
  if (s.options.signal?.aborted) throw new NamespaceMoveError('Interrupted.');
}

/** Every refusal that needs no change anywhere: backends, wal_level, schema, the namespace on both sides. */
async function preflight(
  source: Database,
  target: Database,
  options: NamespaceMoveOptions,
): Promise<{ tables: string[]; names: ReturnType<typeof moveNames> }> {
  const ns = JSON.stringify(options.namespace);
  if (source.backend !== 'postgres' || target.backend !== 'postgres') {
    throw new NamespaceMoveError(
      'A namespace moves between PostgreSQL servers only: set DATABASE_URL to the source server and --to to the target.',
    );
  }
  const level = await walLevel(source);
  if (level !== 'logical') {
    throw new NamespaceMoveError(
      `The source server has wal_level = ${level}; a namespace move needs wal_level = logical ` +
        '(ALTER SYSTEM SET wal_level = logical, then restart the source server).',
    );
  }
  const embedding = await readEmbeddingSettings(source);
  if (!embedding) throw new NamespaceMoveError('The source database has no memgate schema: nothing to move.');
  const tables = await tenantTables(source);
  const names = moveNames(options.namespace, await databaseName(source));
  if ((await fencedTables(source, names.fence)).length > 0) {
    throw new NamespaceMoveError(
      `Namespace ${ns} is read-only on the source: it was moved from there already (fence ${names.fence}).`,
    );
  }
  if (Object.keys(await namespaceRows(source, tables, options.namespace)).length === 0) {
    throw new NamespaceMoveError(
      `Namespace ${ns} is absent from the source: it has no rows in any of ${tables.length} tables.`,
    );
  }
  options.report('target: applying memgate migrations');
  await migrate(target, embedding);
  const [mine, theirs] = await Promise.all([appliedMigrations(source), appliedMigrations(target)]);
  const missing = theirs.filter((m) => !mine.includes(m));
  if (missing.length > 0) {
    throw new NamespaceMoveError(
      `The source lacks migrations the target has (${missing.join(', ')}): run \`memgate migrate\` on the source first.`,
    );
  }
  const onTarget = await namespaceRows(target, tables, options.namespace);
  if (Object.keys(onTarget).length > 0) {
    throw new NamespaceMoveError(
      `Namespace ${ns} already has rows on the target (${describeCounts(onTarget)}): a namespace moves into a server that does not have it.`,
    );
  }
  return { tables, names };
}

function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
}

/** Drops subscription, publication and slots (in that order); safe to run any number of times. */
async function dropReplication(s: Sides): Promise<void> {
  const oid = await subscriptionOid(s.target, s.names.subscription);
  if (oid !== null) s.syncPrefix = `pg_${oid}_sync_`;
  await dropSubscription(s.target, s.names.subscription);
  await dropPublication(s.source, s.names.publication);
  for (let attempt = 0; ; attempt++) {
    const remaining = await dropSlots(s.source, s.names.subscription, s.syncPrefix);
    if (remaining.length === 0) return;
    if (attempt >= 50)
      throw new NamespaceMoveError(`Replication slots still held on the source: ${remaining.join(', ')}`);
    await sleep(200);
  }
}

/** Initial copy: every table of the subscription in state 'r'. */
async function waitInitialCopy(s: Sides): Promise<void> {
  const deadline = Date.now() + s.options.timeoutMs;
  let said = '';
  for (;;) {
    const state = await syncState(s.target, s.names.subscription);
    if (state.errors > 0) {
      throw new NamespaceMoveError(
        `The target's subscription workers failed ${state.errors} times during the initial copy (the target server's log says why).`,
      );
    }
    const line = `initial copy: ${state.ready}/${state.tables} tables ready`;
    if (line !== said) {
      s.options.report(line);
      said = line;
    }
    if (state.tables > 0 && state.ready === state.tables) return;
    if (Date.now() > deadline)
      throw new NamespaceMoveError(`The initial copy did not finish in ${s.options.timeoutMs / 1000} s.`);
    await pause(s, 250);
  }
}

/** Waits until the target received, applied and confirmed the source's WAL up to its position now. */
async function catchUp(s: Sides, label: string): Promise<string> {
  const lsn = await currentLsn(s.source);
  const deadline = Date.now() + s.options.timeoutMs;
  let lastReport = 0;
  for (;;) {
    const confirmed = await confirmedLsn(s.source, s.names.subscription, lsn);
    if (confirmed === null)
      throw new NamespaceMoveError("The move's replication slot disappeared from the source.");
    const received = await receivedLsn(s.target, s.names.subscription, lsn);
    if (confirmed.caughtUp && received) {
      s.options.report(`${label}: target caught up with the source at ${lsn}`);
      return lsn;
    }
    const { errors } = await syncState(s.target, s.names.subscription);
    if (errors > 0)
      throw new NamespaceMoveError(
        `The target's subscription worker failed ${errors} times (the target server's log says why).`,
      );
    if (Date.now() - lastReport > 2000) {
      s.options.report(`${label}: ${confirmed.lagBytes} bytes of WAL behind ${lsn}`);
      lastReport = Date.now();
    }
    if (Date.now() > deadline)
      throw new NamespaceMoveError(
        `${label}: the target did not catch up in ${s.options.timeoutMs / 1000} s.`,
      );
    await pause(s, 100);
  }
}

/** The fence, retried when its lock waits too long (writers hold the tables) or deadlocks with one. */
async function fence(s: Sides): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await s.source.transaction('moveFence', async (tx) => {
        await boundLockWait(tx, 5000);
        await createFence(tx, s.names.fence, s.tables, s.options.namespace);
      });
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= 5 || (code !== '55P03' && code !== '40P01')) throw error;
      s.options.report(`fence: writers hold the tables (${code}); trying again (${attempt}/5)`);
      await pause(s, 500 * attempt);
    }
  }
}

/** Equal digests of the namespace on both sides, memory and derived search columns; else throws. */
async function verify(s: Sides): Promise<{ records: number; digest: string }> {
  const ns = [s.options.namespace];
  const [[mine], [theirs], mineDerived, theirsDerived] = await Promise.all([
    checksums(s.source, ns),
    checksums(s.target, ns),
    derivedDigest(s.source, s.options.namespace),
    derivedDigest(s.target, s.options.namespace),
  ]);
  const same = mine!.digest === theirs!.digest && mine!.records === theirs!.records;
  if (!same || mineDerived !== theirsDerived) {
    throw new NamespaceMoveError(
      `The digests differ — source ${mine!.digest} (${mine!.records} records, search ${mineDerived}), ` +
        `target ${theirs!.digest} (${theirs!.records} records, search ${theirsDerived}).`,
    );
  }
  s.options.report(
    `checksum: ${mine!.digest}  ${s.options.namespace}  ${mine!.records} records, equal on both sides`,
  );
  return { records: mine!.records, digest: mine!.digest };
}

/** The domain packs the namespace enables, registered on the target too (the digest covers them). */
async function copyDomainPacks(s: Sides): Promise<void> {
  const packs = await readDomainPacks(s.source, [s.options.namespace]);
  if (packs.length === 0) return;
  const columns = await writableColumns(s.target, 'domain_packs');
  const added = await insertRows(s.target, 'domain_packs', columns, packs);
  s.options.report(`domain packs: ${packs.length} enabled by the namespace, ${added} new on the target`);
}

/** Undoes a move that did not finish: replication objects, the fence, the target's partial copy. */
async function undo(s: Sides, fenced: boolean, copied: boolean): Promise<string[]> {
  const problems: string[] = [];
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (error) {
      problems.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  await attempt('dropping the replication objects', () => dropReplication(s));
  if (fenced)
    await attempt('lifting the fence on the source', () =>
      s.source.transaction('moveUnfence', (tx) => dropFence(tx, s.names.fence, s.tables)),
    );
  if (copied) {
    await attempt('deleting the partial copy on the target', () =>
      s.target.transaction('moveUndoCopy', (tx) => deleteNamespaceRows(tx, s.tables, s.options.namespace)),
    );
  }
  return problems;
}

/** After a verified copy: the source's rows deleted (--drop-source), or kept read-only without its queues. */
async function settleSource(s: Sides): Promise<number | null> {
  const { namespace } = s.options;
  if (s.options.dropSource) {
    const deleted = await s.source.transaction('moveDropSource', async (tx) => {
      const n = await deleteNamespaceRows(tx, s.tables, namespace);
      await dropFence(tx, s.names.fence, s.tables);
      return n;
    });
    s.options.report(`source: deleted the namespace's ${deleted} rows`);
    return deleted;
  }
  const queues = s.tables.filter((t) => (WORK_QUEUE_TABLES as readonly string[]).includes(t));
  const deleted = await s.source.transaction('moveDropSourceQueues', (tx) =>
    deleteNamespaceRows(tx, queues, namespace),
  );
  s.options.report(
    `source: the namespace stays there read-only (fence ${s.names.fence}); ${deleted} queued work rows now live on the target only`,
  );
  return null;
}

async function timed<T>(phases: Record<string, number>, name: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await fn();
  } finally {
    phases[name] = Math.round(performance.now() - started);
  }
}

/** The subscription, once its slot name is known to be free on the source server. */
async function subscribe(s: Sides): Promise<void> {
  const taken = await slotDatabase(s.source, s.names.subscription);
  if (taken !== null) {
    throw new NamespaceMoveError(
      `A replication slot named ${s.names.subscription} already exists on the source server (database ${taken}).`,
    );
  }
  try {
    await createSubscription(s.target, s.names.subscription, s.options.sourceConninfo, s.names.publication);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new NamespaceMoveError(
      `The target could not create its subscription (${reason}). The target server connects to the source ` +
        "with the source's URL: it must reach that host and port; the target server's log says more.",
    );
  }
}

/** Replication up to a verified, fenced copy on the target; the caller undoes it on a throw. */
async function replicate(
  s: Sides,
  state: { fenced: boolean; copied: boolean },
  phases: Record<string, number>,
) {
  await copyDomainPacks(s);
  await createPublication(s.source, s.names.publication, s.tables, s.options.namespace);
  s.options.report(
    `source: publication ${s.names.publication} of ${s.tables.length} tables, rows of the namespace only`,
  );
  state.copied = true;
  await subscribe(s);
  const oid = await subscriptionOid(s.target, s.names.subscription);
  s.syncPrefix = oid === null ? null : `pg_${oid}_sync_`;
  s.options.report(
    `target: subscription ${s.names.subscription} (copy_data), slot ${s.names.subscription} on the source`,
  );
  await timed(phases, 'initialCopy', () => waitInitialCopy(s));
  await timed(phases, 'catchUp', () => catchUp(s, 'catch-up'));
  await pause(s, 0); // the last moment an interrupt undoes the move before the source is fenced
  await timed(phases, 'fence', () => fence(s));
  state.fenced = true;
  s.options.report(`fence: namespace ${JSON.stringify(s.options.namespace)} is read-only on the source`);
  await timed(phases, 'finalCatchUp', () => catchUp(s, 'final catch-up'));
  const verified = await timed(phases, 'verify', () => verify(s));
  await dropReplication(s);
  s.options.report('replication: subscription, publication and slots dropped');
  const sequences = await advanceSequences(s.target, s.tables);
  await timed(phases, 'analyze', () => analyzeTables(s.target, s.tables));
  s.options.report(
    `target: ${sequences.map((q) => `${q.sequence} → ${q.value}`).join(', ') || 'no sequence needed advancing'}`,
  );
  return { ...verified, sequences };
}

export async function moveNamespace(
  source: Database,
  target: Database,
  options: NamespaceMoveOptions,
): Promise<NamespaceMoveResult> {
  const phases: Record<string, number> = {};
  const { tables, names } = await timed(phases, 'preflight', () => preflight(source, target, options));
  const s: Sides = { source, target, tables, names, options, syncPrefix: null };
  await dropReplication(s); // leftovers of an earlier run that died before its own cleanup
  const counts = await namespaceRows(source, tables, options.namespace);
  const state = { fenced: false, copied: false };
  let moved: Awaited<ReturnType<typeof replicate>>;
  try {
    moved = await replicate(s, state, phases);
  } catch (error) {
    const problems = await undo(s, state.fenced, state.copied);
    const reason = error instanceof Error ? error.message : String(error);
    const after = problems.length
      ? `\nUndoing it met problems, to be looked at by hand: ${problems.join('; ')}`
      : "\nUndone: the replication objects, the fence and the target's partial copy are gone; the source is authoritative, as before.";
    throw new NamespaceMoveError(`${reason}${after}`);
  }
  const droppedFromSource = await settleSource(s);
  return {
    records: moved.records,
    digest: moved.digest,
    tables: counts,
    sequences: moved.sequences,
    droppedFromSource,
    phases,
  };
}
