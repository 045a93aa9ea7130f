import type { Queryable } from '../../db/database.js';
import { param, run, sql } from './sql.js';

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
  const { rows } = await run<{ auditId: number }>(
    q,
    sql`/* appendAudit */
     INSERT INTO audit_log (namespace, principal_id, action, target, summary)
     VALUES (${namespace}, ${entry.principalId}, ${entry.action}, ${entry.target}, ${JSON.stringify(entry.summary)}::jsonb)
     RETURNING audit_id AS "auditId"`,
  );
  return Number(rows[0]!.auditId);
}

/** Newest first; `beforeId` pages backwards through the log. */
export async function listAudit(
  q: Queryable,
  namespace: string,
  options: { actions?: string[] | null; beforeId?: number | null; limit: number },
): Promise<AuditRow[]> {
  const actionsParam = param(options.actions ?? null);
  const beforeIdParam = param(options.beforeId ?? null);
  const { rows } = await run<AuditRow>(
    q,
    sql`/* listAudit */
     SELECT namespace, audit_id AS "auditId", at, principal_id AS "principalId", action, target, summary
     FROM audit_log
     WHERE namespace = ${namespace}
       AND (${actionsParam}::text[] IS NULL OR action = ANY(${actionsParam}::text[]))
       AND (${beforeIdParam}::bigint IS NULL OR audit_id < ${beforeIdParam}::bigint)
     ORDER BY audit_id DESC
     LIMIT ${options.limit}`,
  );
  return rows.map((r) => ({ ...r, auditId: Number(r.auditId) }));
}
