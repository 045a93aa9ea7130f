import type { Queryable } from '../../db/database.js';
import { param, run, sql } from './sql.js';

/**
 * The one store of the audit log: every append (purges, redactions, domain packs, namespace
 * settings, snapshots, backups, the gateway's `pii_access` records) and the admin read. The log
 * is append-only: triggers refuse UPDATE, DELETE and TRUNCATE, and no statement here or elsewhere
 * issues them. Summaries describe what was changed (kinds, sizes, counts, ids), never the
 * redacted or purged content itself.
 */
export interface AuditEntry {
  principalId: string;
  action: string;
  target: string | null;
  summary: Record<string, unknown>;
}

export interface AuditAppend extends AuditEntry {
  namespace: string;
}

export interface AuditRow extends AuditAppend {
  auditId: number;
  at: Date;
}

/** Appends several entries in one statement; returns their ids in input order. */
export async function appendAuditEntries(q: Queryable, entries: readonly AuditAppend[]): Promise<number[]> {
  if (entries.length === 0) return [];
  const { rows } = await run<{ auditId: number }>(
    q,
    sql`/* appendAuditEntries */
     INSERT INTO audit_log (namespace, principal_id, action, target, summary)
     SELECT e.namespace, e.principal_id, e.action, e.target, e.summary
     FROM unnest(${entries.map((e) => e.namespace)}::text[], ${entries.map((e) => e.principalId)}::text[],
                 ${entries.map((e) => e.action)}::text[], ${entries.map((e) => e.target)}::text[],
                 ${entries.map((e) => JSON.stringify(e.summary))}::jsonb[])
       WITH ORDINALITY AS e(namespace, principal_id, action, target, summary, ord)
     ORDER BY e.ord
     RETURNING audit_id AS "auditId"`,
  );
  return rows.map((r) => Number(r.auditId));
}

/** Appends one entry in `namespace` (usually inside the transaction of the change it records). */
export async function appendAudit(q: Queryable, namespace: string, entry: AuditEntry): Promise<number> {
  const [id] = await appendAuditEntries(q, [{ ...entry, namespace }]);
  return id!;
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
): Promise<AuditRow[]> {
  const [since, until, actions, beforeId] = [
    param(f.since),
    param(f.until),
    param(f.actions),
    param(f.beforeId),
  ];
  const { rows } = await run<AuditRow>(
    q,
    sql`/* listAuditTrail */
     SELECT namespace, audit_id AS "auditId", at, principal_id AS "principalId", action, target, summary
     FROM audit_log
     WHERE namespace = ${namespace}
       AND (${since}::timestamptz IS NULL OR at >= ${since}::timestamptz)
       AND (${until}::timestamptz IS NULL OR at < ${until}::timestamptz)
       AND (${actions}::text[] IS NULL OR action = ANY(${actions}::text[]))
       AND (${beforeId}::bigint IS NULL OR audit_id < ${beforeId}::bigint)
     ORDER BY audit_id DESC
     LIMIT ${f.limit}`,
  );
  return rows.map((r) => ({ ...r, auditId: Number(r.auditId) }));
}
