import type { Queryable } from '../../db/database.js';

/**
 * The audit log is append-only: a trigger refuses UPDATE and DELETE, and this store offers
 * no way to issue either. Summaries describe what was changed (kinds, sizes, counts, ids),
 * never the redacted or purged content itself.
 */
export interface AuditEntry {
  principalId: string;
  action: string;
  target: string | null;
  summary: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  namespace: string;
  auditId: number;
  at: Date;
}

export async function appendAudit(q: Queryable, namespace: string, entry: AuditEntry): Promise<number> {
  const { rows } = await q.query<{ auditId: number }>(
    `/* appendAudit */
     INSERT INTO audit_log (namespace, principal_id, action, target, summary)
     VALUES ($1, $2, $3, $4, $5::jsonb)
     RETURNING audit_id AS "auditId"`,
    [namespace, entry.principalId, entry.action, entry.target, JSON.stringify(entry.summary)],
  );
  return Number(rows[0]!.auditId);
}

/** Newest first; `beforeId` pages backwards through the log. */
export async function listAudit(
  q: Queryable,
  namespace: string,
  options: { actions?: string[] | null; beforeId?: number | null; limit: number },
): Promise<AuditRow[]> {
  const { rows } = await q.query<AuditRow>(
    `/* listAudit */
     SELECT namespace, audit_id AS "auditId", at, principal_id AS "principalId", action, target, summary
     FROM audit_log
     WHERE namespace = $1
       AND ($2::text[] IS NULL OR action = ANY($2::text[]))
       AND ($3::bigint IS NULL OR audit_id < $3::bigint)
     ORDER BY audit_id DESC
     LIMIT $4`,
    [namespace, options.actions ?? null, options.beforeId ?? null, options.limit],
  );
  return rows.map((r) => ({ ...r, auditId: Number(r.auditId) }));
}
