import type { Queryable } from '../../../db/database.js';
import { FACT_COLUMNS, type FactRow } from '../../../kernel/store/fact-store.js';
import { run, sql } from '../../../kernel/store/sql.js';
import { factVisible } from '../../../kernel/store/visibility.js';
import { factVisibleTo, visibleTo } from '../../../kernel/store/visibility.js';

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
  await q.query(
    `/* lockSnapshotScope */ SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(31) || $2, 7))`,
    [namespace, scope],
  );
}

export async function findSnapshot(
  q: Queryable,
  namespace: string,
  scope: string,
  snapshotId: string,
): Promise<SnapshotRow | null> {
  const { rows } = await q.query<SnapshotRow>(
    `/* findSnapshot */ SELECT ${SNAPSHOT_COLUMNS} FROM source_snapshots s
     WHERE s.namespace = $1 AND s.scope = $2 AND s.snapshot_id = $3`,
    [namespace, scope, snapshotId],
  );
  return rows[0] ?? null;
}

/** The newest snapshot of a scope (by observed time, then reconciliation order). */
export async function latestSnapshot(
  q: Queryable,
  namespace: string,
  scope: string,
): Promise<SnapshotRow | null> {
  const { rows } = await q.query<SnapshotRow>(
    `/* latestSnapshot */ SELECT ${SNAPSHOT_COLUMNS} FROM source_snapshots s
     WHERE s.namespace = $1 AND s.scope = $2
     ORDER BY s.observed_at DESC, s.reconciled_at DESC LIMIT 1`,
    [namespace, scope],
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
  await q.query(
    `/* recordSnapshot */
     INSERT INTO source_snapshots (namespace, scope, snapshot_id, source, observed_at, body_hash, summary, principal_id)
     VALUES ($1, $2, $3, $4, $5::timestamptz, $6, $7::jsonb, $8)
     ON CONFLICT (namespace, scope, snapshot_id) DO NOTHING`,
    [namespace, s.scope, s.snapshotId, s.source, s.observedAt, s.bodyHash, s.summary, s.principalId],
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
  await q.query(
    `/* stampSnapshotEntities */
     UPDATE entities SET snapshot_scope = $3, snapshot_id = $4, stale = false,
       last_seen = greatest(last_seen, $5::timestamptz)
     WHERE namespace = $1 AND key = ANY($2::text[])
       AND (snapshot_scope IS DISTINCT FROM $3 OR snapshot_id IS DISTINCT FROM $4 OR stale
            OR last_seen IS NULL OR last_seen < $5::timestamptz)`,
    [namespace, keys, scope, snapshotId, observedAt],
  );
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
  const { rows } = await q.query<{ key: string }>(
    `/* markScopeEntitiesStale */
     UPDATE entities SET stale = true, snapshot_id = $4, updated_at = now()
     WHERE namespace = $1 AND snapshot_scope = $2 AND NOT stale AND key <> ALL($3::text[])
       AND ${visibleTo('entities', '$5')}
     RETURNING key`,
    [namespace, scope, listed, snapshotId, visibleScopes],
  );
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
  const { rows } = await q.query<FactRow & { snapshotScope: string | null; snapshotId: string | null }>(
    `/* findScopeFacts */
     SELECT ${FACT_COLUMNS}, f.snapshot_scope AS "snapshotScope", f.snapshot_id AS "snapshotId" FROM facts f
     WHERE f.namespace = $1 AND f.status = 'ACTIVE'
       AND f.valid_from <= $6::timestamptz AND (f.valid_to IS NULL OR f.valid_to > $6::timestamptz)
       AND (f.snapshot_scope = $2
            OR (f.snapshot_scope IS NULL AND (f.subject, f.predicate, f.object) IN (
                  SELECT * FROM unnest($3::text[], $4::text[], $5::text[]))))
       AND ${factVisibleTo('f', '$7')}
     ORDER BY f.valid_from, f.fact_id`,
    [
      namespace,
      scope,
      triples.map((t) => t.subject),
      triples.map((t) => t.predicate),
      triples.map((t) => t.object),
      at,
      visibleScopes,
    ],
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
  await run(
    q,
    sql`/* stampSnapshotFacts */
     UPDATE facts f SET snapshot_scope = ${scope}, snapshot_id = ${snapshotId},
       attributes = coalesce(r.attributes, f.attributes)
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(fact_id text, attributes jsonb, fresh boolean)
     WHERE f.namespace = ${namespace} AND f.fact_id = r.fact_id
       AND (r.fresh OR ${factVisible('f', visibleScopes)})`,
  );
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
  const { rows } = await q.query<{ id: string }>(
    `/* closeSnapshotFacts */
     UPDATE facts SET valid_to = greatest($3::timestamptz, valid_from), snapshot_id = $4
     WHERE namespace = $1 AND fact_id = ANY($2::text[]) AND valid_to IS NULL
       AND ${factVisibleTo('facts', '$5')}
     RETURNING fact_id AS id`,
    [namespace, factIds, at, snapshotId, visibleScopes],
  );
  return rows.map((r) => r.id).sort(byCodeUnit);
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
