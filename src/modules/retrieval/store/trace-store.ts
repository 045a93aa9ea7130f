import type { Queryable } from '../../../db/database.js';
import { visible } from '../../../kernel/store/visibility.js';
import { param, run, sql } from '../../../kernel/store/sql.js';

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

/** Traces of these namespaces older than this many days go with the next trace written. */
export interface TracePrune {
  namespaces: readonly string[];
  olderThanDays: number;
}

/**
 * Inserts the trace rows of one compilation in one statement. The same statement first
 * deletes the traces of `prune.namespaces` older than its retention (the deletion sees the
 * table before the insert, so the new rows are never pruned).
 */
export async function insertTraces(
  q: Queryable,
  rows: TraceWrite[],
  prune: TracePrune | null,
): Promise<{ pruned: number }> {
  if (rows.length === 0) return { pruned: 0 };
  // A JSON string: toParam passes arrays through as SQL arrays, which jsonb cannot parse.
  const traces = JSON.stringify(
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
  );
  const pruneOlderThanDaysParam = param(prune?.namespaces.length ? prune.olderThanDays : null);
  const pruneNamespaces = param(prune?.namespaces ?? []);
  const { rows: out } = await run<{ pruned: number }>(
    q,
    sql`/* insertContextTraces */
     WITH pruned AS (
       DELETE FROM context_traces
       WHERE ${pruneOlderThanDaysParam}::float8 IS NOT NULL AND namespace = ANY(${pruneNamespaces}::text[])
         AND created_at < now() - make_interval(secs => ${pruneOlderThanDaysParam}::float8 * 86400)
       RETURNING 1
     ), inserted AS (
       INSERT INTO context_traces (namespace, trace_id, kind, principal_id, request, channels, decisions, visibility)
       SELECT t.namespace, t.trace_id, t.kind, t.principal_id, t.request, t.channels, t.decisions, t.visibility
       FROM jsonb_to_recordset(${traces}::jsonb) AS t(namespace text, trace_id text, kind text, principal_id text,
            request jsonb, channels jsonb, decisions jsonb, visibility text[])
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM pruned)::int AS pruned, (SELECT count(*) FROM inserted)::int AS inserted`,
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
  const scopesParam = param(visibleScopes);
  const { rows } = await run<TraceRow>(
    q,
    sql`/* findContextTrace */
     SELECT t.namespace, t.trace_id AS "traceId", t.kind, t.principal_id AS "principalId",
            t.created_at AS "createdAt", t.request, t.channels, t.decisions
     FROM context_traces t
     WHERE t.namespace = ${namespace} AND t.trace_id = ${traceId} AND ${visible('t', scopesParam)}
       AND (${scopesParam}::text[] IS NULL OR t.visibility <@ ${scopesParam}::text[])`,
  );
  return rows[0] ?? null;
}

/** Deletes traces older than `days` (maintenance; compilations prune on write as well). */
export async function pruneTraces(q: Queryable, days: number): Promise<number> {
  const { rowCount } = await run(
    q,
    sql`/* pruneContextTraces */
     DELETE FROM context_traces WHERE created_at < now() - make_interval(secs => ${days}::float8 * 86400)`,
  );
  return rowCount;
}
