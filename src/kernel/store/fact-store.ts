import type { Queryable } from '../../db/database.js';
import { changedIds, noteChanges } from '../change-notice.js';
import { factVisible } from './visibility.js';
import { param, raw, run, sql } from './sql.js';

export type EvidenceClass = 'ASSERTED' | 'EXTRACTED' | 'INFERRED' | 'DERIVED';
export type FactStatus = 'ACTIVE' | 'SUPERSEDED' | 'RETRACTED' | 'EVIDENCE_LOST';

export interface FactRow {
  namespace: string;
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  evidence: EvidenceClass;
  confidence: number;
  status: FactStatus;
  conflict: boolean;
  conflictsWith: string[];
  supersedes: string | null;
  supersededBy: string | null;
  observationIds: string[];
  sourcePath: string | null;
  scopes: string[];
  visibility: string[];
  attributes: Record<string, unknown>;
  statusReason: string | null;
}

export const FACT_COLUMNS = `
  f.namespace, f.fact_id AS "factId", f.subject, f.predicate, f.object,
  f.valid_from AS "validFrom", f.valid_to AS "validTo", f.recorded_at AS "recordedAt",
  f.evidence, f.confidence, f.status, f.conflict, f.conflicts_with AS "conflictsWith",
  f.supersedes, f.superseded_by AS "supersededBy", f.observation_ids AS "observationIds",
  f.source_path AS "sourcePath", f.scopes, f.visibility, f.attributes, f.status_reason AS "statusReason"`;

/** `FACT_COLUMNS` of the fact `f` in scope as one JSON object (see ENTITY_JSON). */
export const FACT_JSON = `(SELECT to_jsonb(r) FROM (SELECT ${FACT_COLUMNS}) r)`;

/** A `factJson` object as the row (timestamps come back as text). */
export function factRowOfJson(json: Record<string, unknown>): FactRow {
  const time = (v: unknown) => new Date(v as string);
  return {
    ...(json as unknown as FactRow),
    validFrom: time(json.validFrom),
    validTo: json.validTo == null ? null : time(json.validTo),
    recordedAt: time(json.recordedAt),
  };
}

/** Rows in the order of `factIds`; null where absent or invisible. */
export async function findFactsByIds(
  q: Queryable,
  namespace: string,
  factIds: readonly string[],
  visibleScopes: string[] | null,
): Promise<(FactRow | null)[]> {
  const { rows } = await run<FactRow>(
    q,
    sql`/* findFactsByIds */
     SELECT ${raw(FACT_COLUMNS)} FROM facts f
     WHERE f.namespace = ${namespace} AND f.fact_id = ANY(${factIds}::text[]) AND ${factVisible('f', visibleScopes)}`,
  );
  const byId = new Map(rows.map((r) => [r.factId, r]));
  return factIds.map((id) => byId.get(id) ?? null);
}

/** A new fact as the write path stores it. */
export interface FactWrite {
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  evidence: EvidenceClass;
  confidence: number;
  observationIds: string[];
  sourcePath: string | null;
  scopes: string[];
  visibility: string[];
  attributes: Record<string, unknown>;
  supersedes: string | null;
}

/**
 * The fact an assertion lands on, locked for update: the row with exactly `factId`, or — when
 * the caller gave no validFrom (`inForceAt` set) — an ACTIVE fact with the same subject,
 * predicate and object still in force at or after that instant (the one containing it first,
 * then the earliest later one). Only facts the caller can see are found: a hidden fact is
 * never reinforced (inserting its id then collides, which the caller reports).
 */
export async function findFactForAssertion(
  q: Queryable,
  namespace: string,
  factId: string,
  same: { subject: string; predicate: string; object: string; inForceAt: Date } | null,
  visibleScopes: string[] | null,
): Promise<FactRow | null> {
  const factIdParam = param(factId);
  const subjectParam = param(same?.subject ?? null);
  const inForceAtParam = param(same?.inForceAt ?? new Date(0));
  const { rows } = await run<FactRow>(
    q,
    sql`/* findFactForAssertion */
     SELECT ${raw(FACT_COLUMNS)} FROM facts f
     WHERE f.namespace = ${namespace}
       AND (f.fact_id = ${factIdParam}
            OR (${subjectParam}::text IS NOT NULL AND f.subject = ${subjectParam} AND f.predicate = ${same?.predicate ?? null} AND f.object = ${same?.object ?? null}
                AND f.status = 'ACTIVE' AND (f.valid_to IS NULL OR f.valid_to > ${inForceAtParam}::timestamptz)))
       AND ${factVisible('f', visibleScopes)}
     ORDER BY (f.fact_id = ${factIdParam}) DESC, (f.valid_from <= ${inForceAtParam}::timestamptz) DESC, f.valid_from ASC
     LIMIT 1
     FOR UPDATE OF f`,
  );
  return rows[0] ?? null;
}

/** One fact by id, locked for update (write paths); null when absent or hidden from the caller. */
export async function lockFact(
  q: Queryable,
  namespace: string,
  factId: string,
  visibleScopes: string[] | null,
): Promise<FactRow | null> {
  const { rows } = await run<FactRow>(
    q,
    sql`/* lockFact */ SELECT ${raw(FACT_COLUMNS)} FROM facts f
     WHERE f.namespace = ${namespace} AND f.fact_id = ${factId} AND ${factVisible('f', visibleScopes)} FOR UPDATE OF f`,
  );
  return rows[0] ?? null;
}

/** Which of `factIds` exist (any status) and are visible; write paths check explicit references with it. */
export async function existingFactIds(
  q: Queryable,
  namespace: string,
  factIds: readonly string[],
  visibleScopes: string[] | null,
): Promise<Set<string>> {
  if (factIds.length === 0) return new Set();
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* existingFactIds */ SELECT f.fact_id AS id FROM facts f
     WHERE f.namespace = ${namespace} AND f.fact_id = ANY(${factIds}::text[]) AND ${factVisible('f', visibleScopes)}`,
  );
  return new Set(rows.map((r) => r.id));
}

/** Inserts a new fact; false when a concurrent writer inserted the same id first. */
export async function insertFact(q: Queryable, namespace: string, w: FactWrite): Promise<boolean> {
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* insertFact */
     INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, valid_to, recorded_at, evidence,
                        confidence, observation_ids, source_path, scopes, visibility, attributes, supersedes)
     VALUES (${namespace}, ${w.factId}, ${w.subject}, ${w.predicate}, ${w.object}, ${w.validFrom}::timestamptz, ${w.validTo}::timestamptz, ${w.recordedAt}::timestamptz, ${w.evidence}, ${w.confidence}, ${w.observationIds}::text[], ${w.sourcePath},
             ${w.scopes}::text[], ${w.visibility}::text[], ${w.attributes}::jsonb, ${w.supersedes})
     ON CONFLICT (namespace, fact_id) DO NOTHING
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
  return rows.length > 0;
}

/** What a re-assertion changes on an existing fact (computed by the service). */
export interface FactReinforcement {
  observationIds: string[];
  confidence: number;
  evidence: EvidenceClass;
  scopes: string[];
  visibility: string[];
  attributes: Record<string, unknown>;
  sourcePath: string | null;
  supersedes: string | null;
  /** EVIDENCE_LOST facts that get new support become ACTIVE again. */
  status: FactStatus;
}

export async function reinforceFact(
  q: Queryable,
  namespace: string,
  factId: string,
  r: FactReinforcement,
  visibleScopes: string[] | null,
): Promise<void> {
  const statusParam = param(r.status);
  const changed = await run<{ id: string }>(
    q,
    sql`/* reinforceFact */
     UPDATE facts SET observation_ids = ${r.observationIds}::text[], confidence = ${r.confidence}, evidence = ${r.evidence}, scopes = ${r.scopes}::text[],
       visibility = ${r.visibility}::text[], attributes = ${r.attributes}::jsonb, source_path = coalesce(source_path, ${r.sourcePath}),
       supersedes = coalesce(supersedes, ${r.supersedes}), status = ${statusParam},
       status_reason = CASE WHEN status = ${statusParam} THEN status_reason ELSE NULL END
     WHERE namespace = ${namespace} AND fact_id = ${factId} AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', changed.rows));
}

/**
 * ACTIVE facts of the same subject and predicate with another object whose half-open validity
 * overlaps `[from, to)` (to = null: open). These conflict when the predicate is single-valued.
 */
export async function findOverlappingRivals(
  q: Queryable,
  namespace: string,
  fact: {
    factId: string;
    subject: string;
    predicate: string;
    object: string;
    validFrom: Date;
    validTo: Date | null;
  },
  visibleScopes: string[] | null,
): Promise<string[]> {
  // Only visible rivals: marking a conflict changes the rival row, and hidden rows never change.
  const validToParam = param(fact.validTo);
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* findOverlappingRivals */
     SELECT f.fact_id AS id FROM facts f
     WHERE f.namespace = ${namespace} AND f.subject = ${fact.subject} AND f.predicate = ${fact.predicate} AND f.object <> ${fact.object} AND f.fact_id <> ${fact.factId}
       AND f.status = 'ACTIVE'
       AND (${validToParam}::timestamptz IS NULL OR f.valid_from < ${validToParam}::timestamptz)
       AND (f.valid_to IS NULL OR f.valid_to > ${fact.validFrom}::timestamptz)
       AND f.valid_from < coalesce(f.valid_to, 'infinity'::timestamptz)
       AND ${factVisible('f', visibleScopes)}
     ORDER BY f.valid_from, f.fact_id`,
  );
  return rows.map((r) => r.id);
}

/**
 * Whether a predicate holds one object at a time in this namespace: listed in
 * namespace_settings.single_valued_predicates, or declared with cardinality `one` by a domain
 * pack the namespace enabled.
 */
export async function isSingleValued(q: Queryable, namespace: string, predicate: string): Promise<boolean> {
  const nsParam = param(namespace);
  const predicateParam = param(predicate);
  const { rows } = await run<{ one: boolean }>(
    q,
    sql`/* isSingleValued */
     SELECT EXISTS (
       SELECT 1 FROM namespace_settings WHERE namespace = ${nsParam} AND ${predicateParam} = ANY(single_valued_predicates)
     ) OR EXISTS (
       SELECT 1 FROM namespace_settings s
       CROSS JOIN LATERAL unnest(s.packs) AS r(ref)
       JOIN domain_packs p ON p.name = split_part(r.ref, '@', 1) AND p.version = split_part(r.ref, '@', 2)
       CROSS JOIN LATERAL jsonb_array_elements(p.body->'relations') AS rel
       WHERE s.namespace = ${nsParam} AND rel->>'relation' = ${predicateParam} AND rel->>'cardinality' = 'one'
     ) AS one`,
  );
  return rows[0]?.one ?? false;
}

/**
 * Marks `factId` and every one of `others` as conflicting with each other (both directions).
 * `others` must be visible (the caller found them so); the predicate keeps a hidden one unchanged.
 */
export async function markConflicts(
  q: Queryable,
  namespace: string,
  factId: string,
  others: readonly string[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (others.length === 0) return;
  const factIdParam = param(factId);
  const othersParam = param(others);
  const changed = await run<{ id: string }>(
    q,
    sql`/* markConflicts */
     UPDATE facts SET conflict = true,
       conflicts_with = (
         SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}')
         FROM unnest(conflicts_with || CASE WHEN fact_id = ${factIdParam} THEN ${othersParam}::text[] ELSE ARRAY[${factIdParam}::text] END) x
       )
     WHERE namespace = ${namespace} AND fact_id = ANY(array_append(${othersParam}::text[], ${factIdParam}::text))
       AND (fact_id = ${factIdParam} OR ${factVisible('facts', visibleScopes)})
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', changed.rows));
}

/**
 * Removes `factIds` from every other visible fact's conflicts_with (after a retraction or a
 * purge); a fact left with no rival is no longer in conflict. Hidden facts keep their marks.
 */
export async function dropConflictReferences(
  q: Queryable,
  namespace: string,
  factIds: readonly string[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (factIds.length === 0) return;
  const factIdsParam = param(factIds);
  const changed = await run<{ id: string }>(
    q,
    sql`/* dropConflictReferences */
     UPDATE facts SET
       conflicts_with = (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(conflicts_with) x
                         WHERE x <> ALL(${factIdsParam}::text[])),
       conflict = EXISTS (SELECT 1 FROM unnest(conflicts_with) x WHERE x <> ALL(${factIdsParam}::text[]))
     WHERE namespace = ${namespace} AND conflicts_with && ${factIdsParam}::text[] AND NOT (fact_id = ANY(${factIdsParam}::text[]))
       AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', changed.rows));
}

/**
 * Closes a fact at `at` (kept if it already ended earlier), marks it SUPERSEDED and links its
 * successor. Nothing is deleted.
 */
export async function closeSuperseded(
  q: Queryable,
  namespace: string,
  factId: string,
  at: Date,
  successorId: string,
): Promise<void> {
  const atParam = param(at);
  const changed = await run<{ id: string }>(
    q,
    sql`/* closeSuperseded */
     UPDATE facts SET
       valid_to = CASE WHEN valid_to IS NULL OR valid_to > ${atParam}::timestamptz THEN ${atParam}::timestamptz ELSE valid_to END,
       status = 'SUPERSEDED', superseded_by = ${successorId}
     WHERE namespace = ${namespace} AND fact_id = ${factId}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', changed.rows));
}

/** RETRACTED with the reason; an open interval ends now (never before it started). */
export async function retractFactRow(
  q: Queryable,
  namespace: string,
  factId: string,
  reason: string,
  now: Date,
): Promise<void> {
  const changed = await run<{ id: string }>(
    q,
    sql`/* retractFactRow */
     UPDATE facts SET status = 'RETRACTED', status_reason = ${reason},
       valid_to = CASE WHEN valid_to IS NULL THEN greatest(${now}::timestamptz, valid_from) ELSE valid_to END
     WHERE namespace = ${namespace} AND fact_id = ${factId}
     RETURNING fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', changed.rows));
}

/**
 * Takes an observation out of every fact's evidence. A fact that cited observations and is
 * left with none becomes EVIDENCE_LOST (kept for audit, never served); RETRACTED facts keep
 * their status. Returns the facts touched and those that lost all evidence.
 */
export async function removeObservationEvidence(
  q: Queryable,
  namespace: string,
  observationId: string,
  reason: string,
  visibleScopes: string[] | null,
): Promise<{ affected: string[]; lost: string[] }> {
  const observationIdParam = param(observationId);
  const { rows } = await run<{ id: string; lost: boolean }>(
    q,
    sql`/* removeObservationEvidence */
     UPDATE facts SET
       observation_ids = array_remove(observation_ids, ${observationIdParam}),
       status = CASE WHEN cardinality(array_remove(observation_ids, ${observationIdParam})) = 0 AND status <> 'RETRACTED'
                     THEN 'EVIDENCE_LOST' ELSE status END,
       status_reason = CASE WHEN cardinality(array_remove(observation_ids, ${observationIdParam})) = 0 AND status <> 'RETRACTED'
                            THEN ${reason} ELSE status_reason END
     WHERE namespace = ${namespace} AND observation_ids @> ARRAY[${observationIdParam}::text] AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id, status = 'EVIDENCE_LOST' AND cardinality(observation_ids) = 0 AS lost`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', rows));
  const affected = rows.map((r) => r.id).sort();
  const lost = rows
    .filter((r) => r.lost)
    .map((r) => r.id)
    .sort();
  return { affected, lost };
}

/** Deletes every visible fact touching an entity, in either direction; returns their ids. */
export async function deleteFactsOfEntity(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<string[]> {
  const keyParam = param(key);
  // A removed fact cannot be re-read: its notice carries its own and its endpoints' visibility.
  const { rows } = await run<{ id: string; subject: string; object: string; vis: (string[] | null)[] }>(
    q,
    sql`/* deleteFactsOfEntity */
     DELETE FROM facts WHERE namespace = ${namespace} AND (subject = ${keyParam} OR object = ${keyParam}) AND ${factVisible('facts', visibleScopes)}
     RETURNING fact_id AS id, subject, object,
       jsonb_build_array(to_jsonb(visibility),
         (SELECT to_jsonb(e.visibility) FROM entities e WHERE e.namespace = facts.namespace AND e.key = facts.subject),
         (SELECT to_jsonb(e.visibility) FROM entities e WHERE e.namespace = facts.namespace AND e.key = facts.object)) AS vis`,
  );
  const removed = rows.map((r) => ({ id: r.id, vis: r.vis, refs: [r.subject, r.object] }));
  await noteChanges(q, [{ namespace, kind: 'FACT', ids: [], removed }]);
  return rows.map((r) => r.id).sort();
}
