import type { Queryable } from '../../db/database.js';
import { param, run, sql } from './sql.js';

/**
 * The admin read of the audit log and the gateway's batched appends (one statement per
 * request for its `pii_access` records). The log is append-only: triggers refuse UPDATE,
 * DELETE and TRUNCATE, and no statement here or elsewhere issues them.
 */
export interface AuditTrailRow {
  namespace: string;
  auditId: number;
  at: Date;
  principalId: string;
  action: string;
  target: string | null;
  summary: Record<string, unknown>;
}

export interface AuditAppend {
  namespace: string;
  principalId: string;
  action: string;
  target: string | null;
  summary: Record<string, unknown>;
}

/** Appends several entries in one statement; returns their ids in input order. */
export async function appendAuditEntries(q: Queryable, entries: readonly AuditAppend[]): Promise<number[]> {
  if (entries.length === 0) return [];
  const { rows } = await run<{ auditId: number; ord: number }>(
    q,
    sql`/* appendAuditEntries */
     INSERT INTO audit_log (namespace, principal_id, action, target, summary)
     SELECT e.namespace, e.principal_id, e.action, e.target, e.summary
     FROM unnest(${entries.map((e) => e.namespace)}::text[], ${entries.map((e) => e.principalId)}::text[], ${entries.map((e) => e.action)}::text[], ${entries.map((e) => e.target)}::text[], ${entries.map((e) => JSON.stringify(e.summary))}::jsonb[])
       WITH ORDINALITY AS e(namespace, principal_id, action, target, summary, ord)
     ORDER BY e.ord
     RETURNING audit_id AS "auditId"`,
  );
  return rows.map((r) => Number(r.auditId));
}

export interface AuditTrailFilter {
  since: Date | null;
  until: Date | null;
  actions: string[] | null;
  /** Keyset: entries older than this id. */
  beforeId: number | null;
  limit: number;
}

/** Newest first by `audit_id` (insertion order, exact keyset); `at` in [since, until). */
export async function listAuditTrail(
  q: Queryable,
  namespace: string,
  f: AuditTrailFilter,
): Promise<AuditTrailRow[]> {
  const sinceParam = param(f.since);
  const untilParam = param(f.until);
  const actionsParam = param(f.actions);
  const beforeIdParam = param(f.beforeId);
  const { rows } = await run<AuditTrailRow>(
    q,
    sql`/* listAuditTrail */
     SELECT namespace, audit_id AS "auditId", at, principal_id AS "principalId", action, target, summary
     FROM audit_log
     WHERE namespace = ${namespace}
       AND (${sinceParam}::timestamptz IS NULL OR at >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR at < ${untilParam}::timestamptz)
       AND (${actionsParam}::text[] IS NULL OR action = ANY(${actionsParam}::text[]))
       AND (${beforeIdParam}::bigint IS NULL OR audit_id < ${beforeIdParam}::bigint)
     ORDER BY audit_id DESC
     LIMIT ${f.limit}`,
  );
  return rows.map((r) => ({ ...r, auditId: Number(r.auditId) }));
}
