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
