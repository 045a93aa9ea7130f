import type { Queryable } from '../../../db/database.js';
import { visibleTo } from '../../../kernel/store/visibility.js';

/** One persisted explanation of a compilation, per namespace it touched. */
export interface TraceWrite {
  namespace: string;
  traceId: string;
  kind: string;
  principalId: string;
  request: Record<string, unknown>;
  channels: unknown;
  decisions: unknown[];
  /** Visibility scopes of the items the decisions name: a reader must hold all of them. */
  visibility: string[];
}

export interface TraceRow {
  namespace: string;
  traceId: string;
  kind: string;
  principalId: string | null;
  createdAt: Date;
  request: Record<string, unknown>;
  channels: unknown;
  decisions: unknown[];
}

/**
 * Inserts the trace rows of one compilation in one statement. When `pruneOlderThanDays` is
 * set, the same statement first deletes traces older than that (the deletion sees the table
 * before the insert, so the new rows are never pruned).
 */
export async function insertTraces(
  q: Queryable,
  rows: TraceWrite[],
  pruneOlderThanDays: number | null,
): Promise<{ pruned: number }> {
  if (rows.length === 0) return { pruned: 0 };
  const { rows: out } = await q.query<{ pruned: number }>(
    `/* insertContextTraces */
     WITH pruned AS (
       DELETE FROM context_traces
       WHERE $2::float8 IS NOT NULL AND created_at < now() - make_interval(secs => $2::float8 * 86400)
       RETURNING 1
     ), inserted AS (
       INSERT INTO context_traces (namespace, trace_id, kind, principal_id, request, channels, decisions, visibility)
       SELECT t.namespace, t.trace_id, t.kind, t.principal_id, t.request, t.channels, t.decisions, t.visibility
       FROM jsonb_to_recordset($1::jsonb) AS t(namespace text, trace_id text, kind text, principal_id text,
            request jsonb, channels jsonb, decisions jsonb, visibility text[])
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM pruned)::int AS pruned, (SELECT count(*) FROM inserted)::int AS inserted`,
    [
      // A JSON string: toParam passes arrays through as SQL arrays, which jsonb cannot parse.
      JSON.stringify(
        rows.map((r) => ({
          namespace: r.namespace,
          trace_id: r.traceId,
          kind: r.kind,
          principal_id: r.principalId,
          request: r.request,
          channels: r.channels,
          decisions: r.decisions,
          visibility: r.visibility,
        })),
      ),
      pruneOlderThanDays,
    ],
  );
  return { pruned: out[0]?.pruned ?? 0 };
}

/**
 * A trace by id. A reader sees it only when it may see every item it names: the trace's
 * visibility scopes must all be among the reader's (unrestricted readers see all).
 */
export async function findTrace(
  q: Queryable,
  namespace: string,
  traceId: string,
  visibleScopes: string[] | null,
): Promise<TraceRow | null> {
  const { rows } = await q.query<TraceRow>(
    `/* findContextTrace */
     SELECT t.namespace, t.trace_id AS "traceId", t.kind, t.principal_id AS "principalId",
            t.created_at AS "createdAt", t.request, t.channels, t.decisions
     FROM context_traces t
     WHERE t.namespace = $1 AND t.trace_id = $2 AND ${visibleTo('t', '$3')}
       AND ($3::text[] IS NULL OR t.visibility <@ $3::text[])`,
    [namespace, traceId, visibleScopes],
  );
  return rows[0] ?? null;
}

/** Deletes traces older than `days` (maintenance; compilations prune on write as well). */
export async function pruneTraces(q: Queryable, days: number): Promise<number> {
  const { rowCount } = await q.query(
    `/* pruneContextTraces */
     DELETE FROM context_traces WHERE created_at < now() - make_interval(secs => $1::float8 * 86400)`,
    [days],
  );
  return rowCount;
}
