import type { Queryable } from '../../db/database.js';

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
  const { rows } = await q.query<{ auditId: number; ord: number }>(
    `/* appendAuditEntries */
     INSERT INTO audit_log (namespace, principal_id, action, target, summary)
     SELECT e.namespace, e.principal_id, e.action, e.target, e.summary
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[])
       WITH ORDINALITY AS e(namespace, principal_id, action, target, summary, ord)
     ORDER BY e.ord
     RETURNING audit_id AS "auditId"`,
    [
      entries.map((e) => e.namespace),
      entries.map((e) => e.principalId),
      entries.map((e) => e.action),
      entries.map((e) => e.target),
      entries.map((e) => JSON.stringify(e.summary)),
    ],
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
  const { rows } = await q.query<AuditTrailRow>(
    `/* listAuditTrail */
     SELECT namespace, audit_id AS "auditId", at, principal_id AS "principalId", action, target, summary
     FROM audit_log
     WHERE namespace = $1
       AND ($2::timestamptz IS NULL OR at >= $2::timestamptz)
       AND ($3::timestamptz IS NULL OR at < $3::timestamptz)
       AND ($4::text[] IS NULL OR action = ANY($4::text[]))
       AND ($5::bigint IS NULL OR audit_id < $5::bigint)
     ORDER BY audit_id DESC
     LIMIT $6`,
    [namespace, f.since, f.until, f.actions, f.beforeId, f.limit],
  );
  return rows.map((r) => ({ ...r, auditId: Number(r.auditId) }));
}
