/**
 * Set-based fact writes: a batch of assertions resolved, inserted and reinforced in a constant
 * number of statements (see fact-batch.ts for the rules). Every statement carries the namespace
 * and the fact visibility predicate (a fact is visible only with both its endpoints).
 */
import type { Queryable } from '../../../db/database.js';
import { changedIds, noteChanges } from '../../../kernel/change-notice.js';
import type { FactReinforcement, FactRow, FactWrite } from '../../../kernel/store/fact-store.js';
import { FACT_COLUMNS } from '../../../kernel/store/fact-store.js';
import { raw, run, sql } from '../../../kernel/store/sql.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';

/** One assertion to resolve: the fact it lands on, as `findFactForAssertion` finds it. */
export interface FactProbe {
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo: Date | null;
  /** No explicit validFrom: an ACTIVE fact with the same s/p/o in force at validFrom is the same fact. */
  bySameTriple: boolean;
  /** The predicate holds one object at a time (rivals conflict). */
  singleValued: boolean;
}

export interface FactResolution {
  /** The visible fact the assertion lands on, locked; null when it creates one. */
  match: FactRow | null;
  /** A fact with the assertion's id exists (visible or not). */
  idTaken: boolean;
  /** An endpoint is an entity the writer cannot see. */
  hiddenEndpoint: boolean;
  /** A single-valued predicate has an ACTIVE fact with another object overlapping (any visibility). */
  mayRival: boolean;
}

/** Resolves every probe in one statement; answers in the order of `probes`. */
export async function resolveFactProbes(
  q: Queryable,
  namespace: string,
  probes: readonly FactProbe[],
  visibleScopes: string[] | null,
): Promise<FactResolution[]> {
  if (probes.length === 0) return [];
  const payload = JSON.stringify(
    probes.map((p, i) => ({
      i,
      fact_id: p.factId,
      subject: p.subject,
      predicate: p.predicate,
      object: p.object,
      valid_from: p.validFrom.toISOString(),
      valid_to: p.validTo?.toISOString() ?? null,
      by_spo: p.bySameTriple,
      single: p.singleValued,
    })),
  );
  const { rows } = await run<
    { i: number; idTaken: boolean; hiddenEndpoint: boolean; mayRival: boolean } & FactRow
  >(
    q,
    sql`/* resolveFactProbes */
     SELECT r.i, m.*,
       EXISTS (SELECT 1 FROM facts t WHERE t.namespace = ${namespace} AND t.fact_id = r.fact_id) AS "idTaken",
       EXISTS (SELECT 1 FROM entities e WHERE e.namespace = ${namespace} AND e.key IN (r.subject, r.object)
               AND NOT ${visible('e', visibleScopes)}) AS "hiddenEndpoint",
       (r.single AND EXISTS (
          SELECT 1 FROM facts v WHERE v.namespace = ${namespace} AND v.subject = r.subject
            AND v.predicate = r.predicate AND v.object <> r.object AND v.fact_id <> r.fact_id AND v.status = 'ACTIVE'
            AND (r.valid_to IS NULL OR v.valid_from < r.valid_to)
            AND (v.valid_to IS NULL OR v.valid_to > r.valid_from))) AS "mayRival"
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(i int, fact_id text, subject text, predicate text, object text,
            valid_from timestamptz, valid_to timestamptz, by_spo boolean, single boolean)
     LEFT JOIN LATERAL (
       SELECT ${raw(FACT_COLUMNS)} FROM facts f
       WHERE f.namespace = ${namespace}
         AND (f.fact_id = r.fact_id
              OR (r.by_spo AND f.subject = r.subject AND f.predicate = r.predicate AND f.object = r.object
                  AND f.status = 'ACTIVE' AND (f.valid_to IS NULL OR f.valid_to > r.valid_from)))
         AND ${factVisible('f', visibleScopes)}
       ORDER BY (f.fact_id = r.fact_id) DESC, (f.valid_from <= r.valid_from) DESC, f.valid_from ASC
       LIMIT 1
       FOR UPDATE OF f
     ) m ON true
     ORDER BY r.i`,
  );
  return rows.map((row) => {
    const { i: _i, idTaken, hiddenEndpoint, mayRival, ...fact } = row;
    return { match: fact.factId ? (fact as FactRow) : null, idTaken, hiddenEndpoint, mayRival };
  });
}

/** Which of `predicates` hold one object at a time in this namespace (settings or a pack's `one`). */
export async function singleValuedPredicates(
  q: Queryable,
  namespace: string,
  predicates: readonly string[],
): Promise<Set<string>> {
  if (predicates.length === 0) return new Set();
  const { rows } = await run<{ predicate: string }>(
    q,
    sql`/* singleValuedPredicates */
     SELECT p.predicate FROM unnest(${predicates}::text[]) AS p(predicate)
     WHERE EXISTS (
       SELECT 1 FROM namespace_settings WHERE namespace = ${namespace} AND p.predicate = ANY(single_valued_predicates)
     ) OR EXISTS (
       SELECT 1 FROM namespace_settings s
       CROSS JOIN LATERAL unnest(s.packs) AS r(ref)
       JOIN domain_packs d ON d.name = split_part(r.ref, '@', 1) AND d.version = split_part(r.ref, '@', 2)
       CROSS JOIN LATERAL jsonb_array_elements(d.body->'relations') AS rel
       WHERE s.namespace = ${namespace} AND rel->>'relation' = p.predicate AND rel->>'cardinality' = 'one'
     )`,
  );
  return new Set(rows.map((r) => r.predicate));
}

/** Inserts new facts in one statement; returns the ids inserted (a concurrent writer may win one). */
export async function insertFactRows(
  q: Queryable,
  namespace: string,
  facts: readonly FactWrite[],
): Promise<Set<string>> {
  if (facts.length === 0) return new Set();
  const payload = JSON.stringify(
    facts.map((w) => ({
      fact_id: w.factId,
      subject: w.subject,
      predicate: w.predicate,
      object: w.object,
      valid_from: w.validFrom.toISOString(),
      valid_to: w.validTo?.toISOString() ?? null,
      recorded_at: w.recordedAt.toISOString(),
      evidence: w.evidence,
      confidence: w.confidence,
      observation_ids: w.observationIds,
      source_path: w.sourcePath,
      scopes: w.scopes,
      visibility: w.visibility,
      attributes: w.attributes,
      supersedes: w.supersedes,
    })),
  );
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* insertFactRows */
     INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, valid_to, recorded_at, evidence,
                        confidence, observation_ids, source_path, scopes, visibility, attributes, supersedes)
     SELECT ${namespace}, r.fact_id, r.subject, r.predicate, r.object, r.valid_from, r.valid_to, r.recorded_at,
            r.evidence, r.confidence, r.observation_ids, r.source_path, r.scopes, r.visibility, r.attributes,
            r.supersedes
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(fact_id text, subject text, predicate text, object text,
            valid_from timestamptz, valid_to timestamptz, recorded_at timestamptz, evidence text,
            confidence double precision, observation_ids text[], source_path text, scopes text[],
            visibility text[], attributes jsonb, supersedes text)
     ON CONFLICT (namespace, fact_id) DO NOTHING
     RETURNING fact_id AS id`,
  );
  const ids = rows.map((r) => r.id);
  await noteChanges(q, changedIds(namespace, 'FACT', ids));
  return new Set(ids);
}

/** Applies every reinforcement in one statement (only facts the writer can see change). */
export async function reinforceFactRows(
  q: Queryable,
  namespace: string,
  rows: readonly (FactReinforcement & { factId: string })[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (rows.length === 0) return;
  const payload = JSON.stringify(
    rows.map((r) => ({
      fact_id: r.factId,
      observation_ids: r.observationIds,
      confidence: r.confidence,
      evidence: r.evidence,
      scopes: r.scopes,
      visibility: r.visibility,
      attributes: r.attributes,
      source_path: r.sourcePath,
      supersedes: r.supersedes,
      status: r.status,
    })),
  );
  const { rows: updated } = await run<{ id: string }>(
    q,
    sql`/* reinforceFactRows */
     UPDATE facts f SET observation_ids = r.observation_ids, confidence = r.confidence, evidence = r.evidence,
       scopes = r.scopes, visibility = r.visibility, attributes = r.attributes,
       source_path = coalesce(f.source_path, r.source_path), supersedes = coalesce(f.supersedes, r.supersedes),
       status = r.status, status_reason = CASE WHEN f.status = r.status THEN f.status_reason ELSE NULL END
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(fact_id text, observation_ids text[],
            confidence double precision, evidence text, scopes text[], visibility text[], attributes jsonb,
            source_path text, supersedes text, status text)
     WHERE f.namespace = ${namespace} AND f.fact_id = r.fact_id AND ${factVisible('f', visibleScopes)}
     RETURNING f.fact_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'FACT', updated));
}
