import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';

/** The database's current snapshot, as text: where a feed's next read starts. */
export async function outboxSnapshot(q: Queryable): Promise<string> {
  const { rows } = await run<{ snapshot: string }>(
    q,
    sql`/* outboxSnapshot */ SELECT pg_current_snapshot()::text AS snapshot`,
  );
  return rows[0]!.snapshot;
}

/**
 * Outbox rows committed since `snapshot` was taken: visible to this statement and not to that
 * snapshot. The statement's own snapshot is returned for the next read, so no row is read twice
 * or skipped, however transactions interleave their commits.
 */
export async function changesSince(
  q: Queryable,
  snapshot: string,
): Promise<{ snapshot: string; notices: unknown[] }> {
  const { rows } = await run<{ snapshot: string; notices: unknown[] }>(
    q,
    sql`/* changesSince */
      SELECT pg_current_snapshot()::text AS snapshot,
             coalesce((SELECT jsonb_agg(jsonb_build_object('namespace', o.namespace, 'kind', o.kind,
                                          'ids', to_jsonb(o.ids), 'removed', o.removed) ORDER BY o.xid, o.seq)
                       FROM change_outbox o
                       WHERE o.xid >= pg_snapshot_xmin(${snapshot}::pg_snapshot)
                         AND NOT pg_visible_in_snapshot(o.xid, ${snapshot}::pg_snapshot)), '[]'::jsonb) AS notices`,
  );
  return rows[0]!;
}

/** Drops outbox rows older than `seconds`: a feed further behind than that has lost its place. */
export async function pruneOutbox(q: Queryable, seconds: number): Promise<number> {
  const { rowCount } = await run(
    q,
    sql`/* pruneOutbox */ DELETE FROM change_outbox WHERE created_at < now() - make_interval(secs => ${seconds})`,
  );
  return rowCount;
}
