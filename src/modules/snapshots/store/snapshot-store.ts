import type { Queryable } from '../../../db/database.js';
import { entityChanges, changedIds, noteChanges, type WrittenEntity } from '../../../kernel/change-notice.js';
import { FACT_COLUMNS, type FactRow } from '../../../kernel/store/fact-store.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';

/**
 * Snapshot reconciliation's SQL: the snapshot log, the facts and entities a scope owns, and the
 * bookkeeping columns (snapshot_scope, snapshot_id, stale) of entities and facts. Like every
 * write path, it finds and changes only rows the writer can see.
 */
export interface SnapshotRow {
  namespace: string;
  scope: string;
  snapshotId: string;
  source: string | null;
  observedAt: Date;
  bodyHash: string;
  summary: Record<string, unknown>;
  reconciledAt: Date;
}

const SNAPSHOT_COLUMNS = `s.namespace, s.scope, s.snapshot_id AS "snapshotId", s.source, s.observed_at AS "observedAt",
  s.body_hash AS "bodyHash", s.summary, s.reconciled_at AS "reconciledAt"`;

/** Serialises reconciliations of one scope (transaction-scoped advisory lock). */
export async function lockSnapshotScope(q: Queryable, namespace: string, scope: string): Promise<void> {
  await run(
    q,
    sql`/* lockSnapshotScope */ SELECT pg_advisory_xact_lock(hashtextextended(${namespace} || chr(31) || ${scope}, 7))`,
  );
}

export async function findSnapshot(
  q: Queryable,
  namespace: string,
  scope: string,
  snapshotId: string,
): Promise<SnapshotRow | null> {
  const { rows } = await run<SnapshotRow>(
    q,
    sql`/* findSnapshot */ SELECT ${raw(SNAPSHOT_COLUMNS)} FROM source_snapshots s
     WHERE s.namespace = ${namespace} AND s.scope = ${scope} AND s.snapshot_id = ${snapshotId}`,
  );
  return rows[0] ?? null;
}

/** The newest snapshot of a scope (by observed time, then reconciliation order). */
export async function latestSnapshot(
  q: Queryable,
  namespace: string,
  scope: string,
): Promise<SnapshotRow | null> {
  const { rows } = await run<SnapshotRow>(
    q,
    sql`/* latestSnapshot */ SELECT ${raw(SNAPSHOT_COLUMNS)} FROM source_snapshots s
     WHERE s.namespace = ${namespace} AND s.scope = ${scope}
     ORDER BY s.observed_at DESC, s.reconciled_at DESC LIMIT 1`,
  );
  return rows[0] ?? null;
}

export async function recordSnapshot(
  q: Queryable,
  namespace: string,
  s: {
    scope: string;
    snapshotId: string;
    source: string | null;
    observedAt: Date;
    bodyHash: string;
    summary: unknown;
    principalId: string;
  },
): Promise<void> {
  await run(
    q,
    sql`/* recordSnapshot */
     INSERT INTO source_snapshots (namespace, scope, snapshot_id, source, observed_at, body_hash, summary, principal_id)
     VALUES (${namespace}, ${s.scope}, ${s.snapshotId}, ${s.source}, ${s.observedAt}::timestamptz, ${s.bodyHash}, ${s.summary}::jsonb, ${s.principalId})
     ON CONFLICT (namespace, scope, snapshot_id) DO NOTHING`,
  );
}

/** Marks entities as listed by a snapshot of `scope`: owned by the scope, not stale, seen then. */
export async function stampSnapshotEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  scope: string,
  snapshotId: string,
  observedAt: Date,
): Promise<void> {
  if (keys.length === 0) return;
  const scopeParam = param(scope);
  const snapshotIdParam = param(snapshotId);
  const observedAtParam = param(observedAt);
  const { rows } = await run<WrittenEntity>(
    q,
    sql`/* stampSnapshotEntities */
     UPDATE entities SET snapshot_scope = ${scopeParam}, snapshot_id = ${snapshotIdParam}, stale = false,
       last_seen = greatest(last_seen, ${observedAtParam}::timestamptz)
     WHERE namespace = ${namespace} AND key = ANY(${keys}::text[])
       AND (snapshot_scope IS DISTINCT FROM ${scopeParam} OR snapshot_id IS DISTINCT FROM ${snapshotIdParam} OR stale
            OR last_seen IS NULL OR last_seen < ${observedAtParam}::timestamptz)
     RETURNING key, kind, content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, rows));
}

/**
 * Entities of the scope a snapshot no longer lists become stale (kept, never deleted); only
 * those the writer can see.
 */
export async function markScopeEntitiesStale(
  q: Queryable,
  namespace: string,
  scope: string,
  listed: readonly string[],
  snapshotId: string,
  visibleScopes: string[] | null,
): Promise<string[]> {
  const { rows } = await run<WrittenEntity>(
    q,
    sql`/* markScopeEntitiesStale */
     UPDATE entities SET stale = true, snapshot_id = ${snapshotId}, updated_at = now()
     WHERE namespace = ${namespace} AND snapshot_scope = ${scope} AND NOT stale AND key <> ALL(${listed}::text[])
       AND ${visible('entities', visibleScopes)}
     RETURNING key, kind, content_hash IS NOT NULL AS document`,
  );
  await noteChanges(q, entityChanges(namespace, rows));
  return rows.map((r) => r.key).sort(byCodeUnit);
}

/**
 * The facts a snapshot is compared with: ACTIVE facts in force at `at` that the scope owns, and
 * unowned ones with one of the listed (subject, predicate, object) triples — only facts the
 * writer can see, so a hidden one is neither matched nor closed.
 */
export async function findScopeFacts(
  q: Queryable,
  namespace: string,
  scope: string,
  triples: readonly { subject: string; predicate: string; object: string }[],
  at: Date,
  visibleScopes: string[] | null,
): Promise<FactRow[]> {
  const atParam = param(at);
  const { rows } = await run<FactRow & { snapshotScope: string | null; snapshotId: string | null }>(
    q,
    sql`/* findScopeFacts */
     SELECT ${raw(FACT_COLUMNS)}, f.snapshot_scope AS "snapshotScope", f.snapshot_id AS "snapshotId" FROM facts f
     WHERE f.namespace = ${namespace} AND f.status = 'ACTIVE'
       AND f.valid_from <= ${atParam}::timestamptz AND (f.valid_to IS NULL OR f.valid_to > ${atParam}::timestamptz)
       AND (f.snapshot_scope = ${scope}
            OR (f.snapshot_scope IS NULL AND (f.subject, f.predicate, f.object) IN (
                  SELECT * FROM unnest(${triples.map((t) => t.subject)}::text[], ${triples.map((t) => t.predicate)}::text[], ${triples.map((t) => t.object)}::text[]))))
       AND ${factVisible('f', visibleScopes)}
     ORDER BY f.valid_from, f.fact_id`,
  );
  return rows;
}

export interface SnapshotFactStamp {
  factId: string;
  /** Replaces the fact's attributes when given. */
  attributes: Record<string, unknown> | null;
  /** Written by this reconciliation just now (its visibility is the snapshot item's own). */
  fresh: boolean;
}

/**
 * Records in one statement that a snapshot listed these facts. A fact it matched was found
 * visible to the writer and must still be; one it has just asserted is the writer's own.
 */
export async function stampSnapshotFacts(
  q: Queryable,
  namespace: string,
  stamps: readonly SnapshotFactStamp[],
  scope: string,
  snapshotId: string,
  visibleScopes: string[] | null,
): Promise<void> {
  if (stamps.length === 0) return;
  const payload = JSON.stringify(
    stamps.map((s) => ({ fact_id: s.factId, attributes: s.attributes, fresh: s.fresh })),
  );
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* stampSnapshotFacts */
     UPDATE facts f SET snapshot_scope = ${scope}, snapshot_id = ${snapshotId},
       attributes = coalesce(r.attributes, f.attributes)
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(fact_id text, attributes jsonb, fresh boolean)
     WHERE f.namespace = ${namespace} AND f.fact_id = r.fact_id
       AND (r.fresh OR ${factVisible('f', visibleScopes)})
     RETURNING f.fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
}

/** Ends the validity of facts a snapshot dropped at the snapshot's time (history is kept). */
export async function closeSnapshotFacts(
  q: Queryable,
  namespace: string,
  factIds: readonly string[],
  at: Date,
  snapshotId: string,
  visibleScopes: string[] | null,
): Promise<string[]> {
  if (factIds.length === 0) return [];
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* closeSnapshotFacts */
     UPDATE facts SET valid_to = greatest(${at}::timestamptz, valid_from), snapshot_id = ${snapshotId}
     WHERE namespace = ${namespace} AND fact_id = ANY(${factIds}::text[]) AND valid_to IS NULL
       AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
  return rows.map((r) => r.id).sort(byCodeUnit);
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
