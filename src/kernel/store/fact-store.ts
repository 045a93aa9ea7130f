import type { Queryable } from '../../db/database.js';
import { factVisibleTo } from './visibility.js';

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
  const { rows } = await q.query<FactRow>(
    `/* findFactsByIds */
     SELECT ${FACT_COLUMNS} FROM facts f
     WHERE f.namespace = $1 AND f.fact_id = ANY($2::text[]) AND ${factVisibleTo('f', '$3')}`,
    [namespace, factIds, visibleScopes],
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
  const { rows } = await q.query<FactRow>(
    `/* findFactForAssertion */
     SELECT ${FACT_COLUMNS} FROM facts f
     WHERE f.namespace = $1
       AND (f.fact_id = $2
            OR ($3::text IS NOT NULL AND f.subject = $3 AND f.predicate = $4 AND f.object = $5
                AND f.status = 'ACTIVE' AND (f.valid_to IS NULL OR f.valid_to > $6::timestamptz)))
       AND ${factVisibleTo('f', '$7')}
     ORDER BY (f.fact_id = $2) DESC, (f.valid_from <= $6::timestamptz) DESC, f.valid_from ASC
     LIMIT 1
     FOR UPDATE OF f`,
    [
      namespace,
      factId,
      same?.subject ?? null,
      same?.predicate ?? null,
      same?.object ?? null,
      same?.inForceAt ?? new Date(0),
      visibleScopes,
    ],
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
  const { rows } = await q.query<FactRow>(
    `/* lockFact */ SELECT ${FACT_COLUMNS} FROM facts f
     WHERE f.namespace = $1 AND f.fact_id = $2 AND ${factVisibleTo('f', '$3')} FOR UPDATE OF f`,
    [namespace, factId, visibleScopes],
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
  const { rows } = await q.query<{ id: string }>(
    `/* existingFactIds */ SELECT f.fact_id AS id FROM facts f
     WHERE f.namespace = $1 AND f.fact_id = ANY($2::text[]) AND ${factVisibleTo('f', '$3')}`,
    [namespace, factIds, visibleScopes],
  );
  return new Set(rows.map((r) => r.id));
}

/** Inserts a new fact; false when a concurrent writer inserted the same id first. */
export async function insertFact(q: Queryable, namespace: string, w: FactWrite): Promise<boolean> {
  const { rows } = await q.query(
    `/* insertFact */
     INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, valid_to, recorded_at, evidence,
                        confidence, observation_ids, source_path, scopes, visibility, attributes, supersedes)
     VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::timestamptz, $8::timestamptz, $9, $10, $11::text[], $12,
             $13::text[], $14::text[], $15::jsonb, $16)
     ON CONFLICT (namespace, fact_id) DO NOTHING
     RETURNING fact_id`,
    [
      namespace,
      w.factId,
      w.subject,
      w.predicate,
      w.object,
      w.validFrom,
      w.validTo,
      w.recordedAt,
      w.evidence,
      w.confidence,
      w.observationIds,
      w.sourcePath,
      w.scopes,
      w.visibility,
      w.attributes,
      w.supersedes,
    ],
  );
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
  await q.query(
    `/* reinforceFact */
     UPDATE facts SET observation_ids = $3::text[], confidence = $4, evidence = $5, scopes = $6::text[],
       visibility = $7::text[], attributes = $8::jsonb, source_path = coalesce(source_path, $9),
       supersedes = coalesce(supersedes, $10), status = $11,
       status_reason = CASE WHEN status = $11 THEN status_reason ELSE NULL END
     WHERE namespace = $1 AND fact_id = $2 AND ${factVisibleTo('facts', '$12')}`,
    [
      namespace,
      factId,
      r.observationIds,
      r.confidence,
      r.evidence,
      r.scopes,
      r.visibility,
      r.attributes,
      r.sourcePath,
      r.supersedes,
      r.status,
      visibleScopes,
    ],
  );
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
  const { rows } = await q.query<{ id: string }>(
    `/* findOverlappingRivals */
     SELECT f.fact_id AS id FROM facts f
     WHERE f.namespace = $1 AND f.subject = $2 AND f.predicate = $3 AND f.object <> $4 AND f.fact_id <> $5
       AND f.status = 'ACTIVE'
       AND ($7::timestamptz IS NULL OR f.valid_from < $7::timestamptz)
       AND (f.valid_to IS NULL OR f.valid_to > $6::timestamptz)
       AND f.valid_from < coalesce(f.valid_to, 'infinity'::timestamptz)
       AND ${factVisibleTo('f', '$8')}
     ORDER BY f.valid_from, f.fact_id`,
    [
      namespace,
      fact.subject,
      fact.predicate,
      fact.object,
      fact.factId,
      fact.validFrom,
      fact.validTo,
      visibleScopes,
    ],
  );
  return rows.map((r) => r.id);
}

/**
 * Whether a predicate holds one object at a time in this namespace: listed in
 * namespace_settings.single_valued_predicates, or declared with cardinality `one` by a domain
 * pack the namespace enabled.
 */
export async function isSingleValued(q: Queryable, namespace: string, predicate: string): Promise<boolean> {
  const { rows } = await q.query<{ one: boolean }>(
    `/* isSingleValued */
     SELECT EXISTS (
       SELECT 1 FROM namespace_settings WHERE namespace = $1 AND $2 = ANY(single_valued_predicates)
     ) OR EXISTS (
       SELECT 1 FROM namespace_settings s
       CROSS JOIN LATERAL unnest(s.packs) AS r(ref)
       JOIN domain_packs p ON p.name = split_part(r.ref, '@', 1) AND p.version = split_part(r.ref, '@', 2)
       CROSS JOIN LATERAL jsonb_array_elements(p.body->'relations') AS rel
       WHERE s.namespace = $1 AND rel->>'relation' = $2 AND rel->>'cardinality' = 'one'
     ) AS one`,
    [namespace, predicate],
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
  await q.query(
    `/* markConflicts */
     UPDATE facts SET conflict = true,
       conflicts_with = (
         SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}')
         FROM unnest(conflicts_with || CASE WHEN fact_id = $2 THEN $3::text[] ELSE ARRAY[$2::text] END) x
       )
     WHERE namespace = $1 AND fact_id = ANY(array_append($3::text[], $2::text))
       AND (fact_id = $2 OR ${factVisibleTo('facts', '$4')})`,
    [namespace, factId, others, visibleScopes],
  );
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
  await q.query(
    `/* dropConflictReferences */
     UPDATE facts SET
       conflicts_with = (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(conflicts_with) x
                         WHERE x <> ALL($2::text[])),
       conflict = EXISTS (SELECT 1 FROM unnest(conflicts_with) x WHERE x <> ALL($2::text[]))
     WHERE namespace = $1 AND conflicts_with && $2::text[] AND NOT (fact_id = ANY($2::text[]))
       AND ${factVisibleTo('facts', '$3')}`,
    [namespace, factIds, visibleScopes],
  );
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
  await q.query(
    `/* closeSuperseded */
     UPDATE facts SET
       valid_to = CASE WHEN valid_to IS NULL OR valid_to > $3::timestamptz THEN $3::timestamptz ELSE valid_to END,
       status = 'SUPERSEDED', superseded_by = $4
     WHERE namespace = $1 AND fact_id = $2`,
    [namespace, factId, at, successorId],
  );
}

/** RETRACTED with the reason; an open interval ends now (never before it started). */
export async function retractFactRow(
  q: Queryable,
  namespace: string,
  factId: string,
  reason: string,
  now: Date,
): Promise<void> {
  await q.query(
    `/* retractFactRow */
     UPDATE facts SET status = 'RETRACTED', status_reason = $3,
       valid_to = CASE WHEN valid_to IS NULL THEN greatest($4::timestamptz, valid_from) ELSE valid_to END
     WHERE namespace = $1 AND fact_id = $2`,
    [namespace, factId, reason, now],
  );
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
  const { rows } = await q.query<{ id: string; lost: boolean }>(
    `/* removeObservationEvidence */
     UPDATE facts SET
       observation_ids = array_remove(observation_ids, $2),
       status = CASE WHEN cardinality(array_remove(observation_ids, $2)) = 0 AND status <> 'RETRACTED'
                     THEN 'EVIDENCE_LOST' ELSE status END,
       status_reason = CASE WHEN cardinality(array_remove(observation_ids, $2)) = 0 AND status <> 'RETRACTED'
                            THEN $3 ELSE status_reason END
     WHERE namespace = $1 AND observation_ids @> ARRAY[$2::text] AND ${factVisibleTo('facts', '$4')}
     RETURNING fact_id AS id, status = 'EVIDENCE_LOST' AND cardinality(observation_ids) = 0 AS lost`,
    [namespace, observationId, reason, visibleScopes],
  );
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
  const { rows } = await q.query<{ id: string }>(
    `/* deleteFactsOfEntity */
     DELETE FROM facts WHERE namespace = $1 AND (subject = $2 OR object = $2) AND ${factVisibleTo('facts', '$3')}
     RETURNING fact_id AS id`,
    [namespace, key, visibleScopes],
  );
  return rows.map((r) => r.id).sort();
}
