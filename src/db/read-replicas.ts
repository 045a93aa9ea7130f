import type { QueryResult, Queryable, ReadReplicas } from './database.js';
import type { ReplicaLoad } from '../observability/metrics.js';
import { isConnectionLoss, isDatabaseUnavailable, isWriteRefused } from './unavailable.js';
import { MemgateError } from '../errors.js';

/**
 * Streaming replicas that serve reads (MEMGATE_READ_DATABASE_URLS). Each is sampled every
 * SAMPLE_MS for how far it has replayed the primary's WAL; a read that must see a given write
 * (its commit LSN) goes to a replica that has replayed it, or to the primary. A replica that
 * loses its connection or cancels a statement in a recovery conflict is skipped until a later
 * sample finds it well, and the read is retried once elsewhere (reads are idempotent).
 */

/** How often each replica's replay position (and the primary's WAL position) is sampled. */
export const SAMPLE_MS = 200;

/** A node that answers queries: a replica's pools, or the primary's. */
export interface QueryNode {
  query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
  close(): Promise<void>;
}

/** An LSN as PostgreSQL prints it ("16/B374D848") as a number; null for anything else. */
export function parseLsn(text: string | null | undefined): bigint | null {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text ?? '');
  if (!match) return null;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

interface Replica {
  name: string;
  node: QueryNode;
  up: boolean;
  replay: bigint | null;
  lagSeconds: number | null;
}

/** A recovery conflict cancelled the statement on a standby: the primary can answer it. */
function isRecoveryConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01' || /conflict with recovery/i.test(String(error));
}

/** Whether a node failed in a way a retry may not: unreachable, or a recovery conflict. */
function replicaFault(error: unknown): boolean {
  if (error instanceof MemgateError) return isDatabaseUnavailable(error) && !isWriteRefused(error);
  return isConnectionLoss(error) || isRecoveryConflict(error);
}

export function createReadReplicas(
  primary: QueryNode,
  replicas: { name: string; node: QueryNode }[],
  options: { maxLagSeconds: number },
): ReadReplicas {
  const nodes: Replica[] = replicas.map((r) => ({ ...r, up: false, replay: null, lagSeconds: null }));
  let primaryAt: bigint | null = null;
  let turn = 0;

  const walPosition = async (): Promise<bigint | null> => {
    const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    return parseLsn(rows[0]?.lsn);
  };
  const sample = async (): Promise<void> => {
    const at = await walPosition().catch(() => null);
    if (at !== null) primaryAt = at;
    await Promise.all(nodes.map(sampleReplica));
  };
  const sampleReplica = async (replica: Replica): Promise<void> => {
    try {
      const { rows } = await replica.node.query<{ replay: string | null; recovery: boolean; lag: number }>(
        `SELECT pg_last_wal_replay_lsn()::text AS replay, pg_is_in_recovery() AS recovery,
                CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                     ELSE COALESCE(EXTRACT(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)::float8
                END AS lag`,
      );
      const row = rows[0];
      // A standby promoted to primary has left this primary's timeline: no longer a replica of it.
      replica.up = Boolean(row?.recovery);
      replica.replay = parseLsn(row?.replay);
      replica.lagSeconds = row ? Number(row.lag) : null;
    } catch {
      replica.up = false;
    }
  };
  // One sample at a time: an unreachable replica must not pile samples up behind it.
  let sampling: Promise<void> | null = null;
  const sampleUnlessSampling = () => {
    sampling ??= sample().finally(() => {
      sampling = null;
    });
  };
  sampleUnlessSampling();
  const timer = setInterval(sampleUnlessSampling, SAMPLE_MS);
  timer.unref();

  const eligible = (minLsn: bigint | null): Replica[] =>
    nodes.filter(
      (r) =>
        r.up &&
        (minLsn === null
          ? r.lagSeconds !== null && r.lagSeconds <= options.maxLagSeconds
          : r.replay !== null && r.replay >= minLsn),
    );

  const readerOn = (first: Replica): Queryable => ({
    query: async <R>(sql: string, params?: readonly unknown[]) => {
      try {
        return await first.node.query<R>(sql, params);
      } catch (error) {
        // A statement that writes reached the standby: only the primary can run it.
        if (isWriteRefused(error)) return primary.query<R>(sql, params);
        if (!replicaFault(error)) throw error;
        first.up = false;
        // Once more, elsewhere: another replica as current as this one was, else the primary.
        const other = eligible(first.replay).find((r) => r !== first);
        return (other?.node ?? primary).query<R>(sql, params);
      }
    },
  });

  return {
    reader(minLsn) {
      const candidates = eligible(minLsn);
      if (candidates.length === 0) return null;
      turn = (turn + 1) % candidates.length;
      return readerOn(candidates[turn]!);
    },
    commitLsn: walPosition,
    state: (): ReplicaLoad[] =>
      nodes.map((r) => ({
        name: r.name,
        up: r.up,
        replayLsn: r.replay === null ? null : formatLsn(r.replay),
        lagBytes: r.replay === null || primaryAt === null ? null : Math.max(0, Number(primaryAt - r.replay)),
        lagSeconds: r.lagSeconds,
      })),
    async close() {
      clearInterval(timer);
      await sampling?.catch(() => undefined);
      await Promise.all(nodes.map((r) => r.node.close()));
    },
  };
}

/**
 * The primary as a query operation reads it: a statement whose connection was lost runs once
 * more on a fresh one (a pooled connection cut by a switchover or a proxy; a read is
 * idempotent). Still unreachable: UNAVAILABLE, as before.
 */
export function readingPrimary(primary: Queryable): Queryable {
  return {
    query: async <R>(sql: string, params?: readonly unknown[]) => {
      try {
        return await primary.query<R>(sql, params);
      } catch (error) {
        if (!replicaFault(error)) throw error;
        return primary.query<R>(sql, params);
      }
    },
  };
}

/** host:port/database of a connection string, without its credentials. */
export function nodeName(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'replica';
  }
}
