/**
 * Reading back a compilation's candidates: the few columns scoring and packing need, never an
 * embedding (the cosine distance to the query is computed here when a query vector exists).
 * Every kind asked for is read in ONE statement (a UNION ALL of one SELECT per kind, each row
 * as JSON), each branch with the namespace predicate and the visibility predicate; lookups are
 * `= ANY` on primary keys and correlated subqueries, plans that do not depend on table
 * statistics (PGlite has no autovacuum, so it never analyzes). Facts come with their
 * hard-filter verdict, so that a fact reached by any channel is only served when ACTIVE at asOf.
 */
import type { Queryable } from '../../../db/database.js';
import type { EvidenceClass } from '../../../domain/evidence.js';
import { DOCUMENT_LINK_ORIGIN } from '../../documents/index.js';
import { namedIn } from '../../../kernel/store/entity-link-store.js';
import { type Param, type SqlFragment, join, param, raw, run, sql } from '../../../kernel/store/sql.js';
import { factHeld, factVisible, inNamespaces, relevant, visible } from '../../../kernel/store/visibility.js';

export const MAX_CANDIDATE_TEXT = 32_768;

export interface CandidateReadContext {
  asOf: Date;
  /**
   * The caller's asOf (null = now): facts memory did not hold then are not served (see
   * factHeld), and an end date after it is not shown (it was not known then).
   */
  heldAt: Date | null;
  /** The query embedding as pgvector text, or null (no distance then). */
  queryVector: string | null;
  visibleScopes: string[] | null;
  /** Relevance scopes requested; null = no relevance filter. */
  scopes: string[] | null;
  /** The query text: entities it names are matched against each observation's links; null = none. */
  query?: string | null;
}

export interface CandidatePairs {
  chunk: { namespace: string; id: string }[];
  fact: { namespace: string; id: string }[];
  observation: { namespace: string; id: string }[];
  entity: { namespace: string; id: string }[];
}

export interface ChunkCandidateRow {
  namespace: string;
  chunkId: number;
  nodeKey: string;
  kind: string;
  title: string | null;
  heading: string | null;
  text: string;
  sourcePath: string | null;
  scopes: string[];
  observationId: string | null;
  time: string | null;
  pii: boolean;
  nodeTitle: string | null;
  distance: number | null;
  relevant: boolean;
  /** Entities the query names that the chunk's observation is linked to (null: none). */
  namedEntities: string[] | null;
}

export type FactVerdict =
  | 'EVIDENCE_LOST'
  | 'RETRACTED'
  | 'SUPERSEDED'
  | 'NOT_VALID_AT_AS_OF'
  | 'OUT_OF_SCOPE';

export interface FactCandidateRow {
  namespace: string;
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: string;
  validTo: string | null;
  evidence: EvidenceClass;
  status: string;
  conflict: boolean;
  conflictsWith: string[];
  sourcePath: string | null;
  scopes: string[];
  subjectTitle: string;
  objectTitle: string;
  pii: boolean;
  distance: number | null;
  verdict: FactVerdict | null;
  /** A link a document's text states (LINKS_TO): its validFrom is when it was written. */
  structural: boolean;
}

export interface ObservationCandidateRow {
  namespace: string;
  observationId: string;
  kind: string;
  sourceSystem: string;
  sourceStream: string | null;
  sourceExternalId: string | null;
  occurredAt: string;
  scopes: string[];
  text: string;
  pii: boolean;
  distance: number | null;
  relevant: boolean;
  /** Entities the query names that the observation is linked to (null: none). */
  namedEntities: string[] | null;
}

export interface EntityCandidateRow {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  attributes: string;
  scopes: string[];
  sourcePath: string | null;
  pii: boolean;
  time: string | null;
  relevant: boolean;
}

export interface CandidateRows {
  chunk: ChunkCandidateRow[];
  fact: FactCandidateRow[];
  observation: ObservationCandidateRow[];
  entity: EntityCandidateRow[];
}

/** Values every branch binds: one placeholder each for the whole statement. */
interface Shared {
  vector: Param;
  asOf: Param;
  heldAt: Param;
}

/**
 * The rows one branch reads: its namespaces and an SQL array of ids — bound values, or a
 * subquery over an earlier part of the same statement (the multi-hop pass reads its hits so).
 */
export interface CandidateTarget {
  namespaces: readonly string[];
  /** An array expression of the kind's id type (bigint[] for chunks, text[] otherwise). */
  ids: SqlFragment;
}

export type CandidateTargets = Partial<Record<keyof CandidatePairs, CandidateTarget>>;

/**
 * The entities the query names among those `alias`'s observation is linked to (the
 * entity-name bonus): mentions by (namespace, observation_id), entities by primary key.
 */
function namedEntitiesOf(alias: string, ctx: CandidateReadContext): SqlFragment {
  if (!ctx.query || ctx.query.trim() === '') return raw('NULL::text[]');
  const a = raw(alias);
  return sql`(SELECT array_agg(m.entity_key ORDER BY m.entity_key) FROM mentions m
              JOIN entities e ON e.namespace = m.namespace AND e.key = m.entity_key
              WHERE m.namespace = ${a}.namespace AND m.observation_id = ${a}.observation_id
                AND ${visible('e', ctx.visibleScopes)} AND ${namedIn('e', ctx.query)})`;
}

function chunkRows(t: CandidateTarget, s: Shared, ctx: CandidateReadContext): SqlFragment {
  return sql`SELECT c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", c.kind, c.title, c.heading,
            left(c.text, ${raw(String(MAX_CANDIDATE_TEXT))}) AS text, c.source_path AS "sourcePath", c.scopes,
            c.observation_id AS "observationId", coalesce(c.occurred_at, c.created_at) AS time, c.pii,
            (SELECT e.title FROM entities e
              WHERE e.namespace = c.namespace AND e.key = c.node_key AND ${visible('e', ctx.visibleScopes)}) AS "nodeTitle",
            (c.embedding <=> ${s.vector}::vector)::float8 AS distance,
            ${relevant('c', ctx.scopes)} AS relevant,
            ${namedEntitiesOf('c', ctx)} AS "namedEntities"
     FROM chunks c
     WHERE ${inNamespaces('c', t.namespaces)} AND c.chunk_id = ANY(${t.ids})
       AND ${visible('c', ctx.visibleScopes)}`;
}

function factRows(t: CandidateTarget, s: Shared, ctx: CandidateReadContext): SqlFragment {
  // Endpoint titles and visibility by correlated lookups on the primary key.
  return sql`SELECT f.namespace, f.fact_id AS "factId", f.subject, f.predicate, f.object, f.valid_from AS "validFrom",
            CASE WHEN f.valid_to > ${s.heldAt}::timestamptz THEN NULL ELSE f.valid_to END AS "validTo", f.evidence, f.status, f.conflict, f.conflicts_with AS "conflictsWith",
            f.source_path AS "sourcePath", f.scopes, s.title AS "subjectTitle", o.title AS "objectTitle",
            (s.pii OR o.pii) AS pii, (f.attributes->>'origin') IS NOT DISTINCT FROM ${DOCUMENT_LINK_ORIGIN} AS structural,
            (SELECT min(c.embedding <=> ${s.vector}::vector)::float8 FROM chunks c
              WHERE ${s.vector}::vector IS NOT NULL AND c.namespace = f.namespace AND c.observation_id = ANY(f.observation_ids)
                AND c.observation_id IS NOT NULL AND ${visible('c', ctx.visibleScopes)}) AS distance,
            CASE
              WHEN f.status = 'EVIDENCE_LOST' THEN 'EVIDENCE_LOST'
              WHEN f.status = 'RETRACTED' THEN 'RETRACTED'
              WHEN NOT ${factHeld('f', ctx.heldAt)} THEN 'NOT_VALID_AT_AS_OF'
              WHEN f.valid_from > ${s.asOf}::timestamptz OR (f.valid_to IS NOT NULL AND f.valid_to <= ${s.asOf}::timestamptz)
                THEN CASE WHEN f.status = 'SUPERSEDED' THEN 'SUPERSEDED' ELSE 'NOT_VALID_AT_AS_OF' END
              WHEN NOT ${relevant('f', ctx.scopes)} THEN 'OUT_OF_SCOPE'
            END AS verdict
     FROM facts f
     CROSS JOIN LATERAL (SELECT e.title, e.pii FROM entities e
                         WHERE e.namespace = f.namespace AND e.key = f.subject AND ${visible('e', ctx.visibleScopes)}) s
     CROSS JOIN LATERAL (SELECT e.title, e.pii FROM entities e
                         WHERE e.namespace = f.namespace AND e.key = f.object AND ${visible('e', ctx.visibleScopes)}) o
     WHERE ${inNamespaces('f', t.namespaces)} AND f.fact_id = ANY(${t.ids})
       AND ${factVisible('f', ctx.visibleScopes)}`;
}

function observationRows(t: CandidateTarget, s: Shared, ctx: CandidateReadContext): SqlFragment {
  return sql`SELECT o.namespace, o.observation_id AS "observationId", o.kind, o.source_system AS "sourceSystem",
            o.source_stream AS "sourceStream", o.source_external_id AS "sourceExternalId",
            o.occurred_at AS "occurredAt", o.scopes,
            left(coalesce(o.content, o.data::text, ''), ${raw(String(MAX_CANDIDATE_TEXT))}) AS text, o.pii,
            (SELECT min(c.embedding <=> ${s.vector}::vector)::float8 FROM chunks c
              WHERE ${s.vector}::vector IS NOT NULL AND c.namespace = o.namespace AND c.observation_id = o.observation_id
                AND ${visible('c', ctx.visibleScopes)}) AS distance,
            ${relevant('o', ctx.scopes)} AS relevant,
            ${namedEntitiesOf('o', ctx)} AS "namedEntities"
     FROM observations o
     WHERE ${inNamespaces('o', t.namespaces)} AND o.observation_id = ANY(${t.ids})
       AND ${visible('o', ctx.visibleScopes)} AND o.status <> 'REDACTED'`;
}

function entityRows(t: CandidateTarget, s: Shared, ctx: CandidateReadContext): SqlFragment {
  return sql`SELECT e.namespace, e.key, e.kind, coalesce(v.title, e.title) AS title,
            left(coalesce(v.attributes, e.attributes)::text, 2000) AS attributes, e.scopes,
            e.source_path AS "sourcePath", e.pii, coalesce(e.last_seen, e.updated_at) AS time,
            ${relevant('e', ctx.scopes)} AS relevant
     FROM entities e
     LEFT JOIN LATERAL (
       SELECT ev.title, ev.attributes FROM entity_versions ev
       WHERE ev.namespace = e.namespace AND ev.key = e.key AND ev.valid_from <= ${s.asOf}::timestamptz
         AND (ev.valid_to IS NULL OR ev.valid_to > ${s.asOf}::timestamptz)
       ORDER BY ev.valid_from DESC LIMIT 1
     ) v ON true
     WHERE ${inNamespaces('e', t.namespaces)} AND e.key = ANY(${t.ids})
       AND ${visible('e', ctx.visibleScopes)} AND NOT e.placeholder`;
}

const BRANCHES = {
  chunk: chunkRows,
  fact: factRows,
  observation: observationRows,
  entity: entityRows,
} as const;

/**
 * One `SELECT kind, row` per kind of `targets` (in the fixed order chunk, fact, observation,
 * entity), to be joined by UNION ALL into a statement and read back with `candidateRowsOf`.
 */
export function candidateBranches(targets: CandidateTargets, ctx: CandidateReadContext): SqlFragment[] {
  const shared: Shared = { vector: param(ctx.queryVector), asOf: param(ctx.asOf), heldAt: param(ctx.heldAt) };
  return (Object.keys(BRANCHES) as (keyof CandidatePairs)[]).flatMap((kind) => {
    const target = targets[kind];
    if (!target) return [];
    return [
      sql`SELECT ${raw(`'${kind}'`)} AS kind, to_jsonb(x) AS row FROM (${BRANCHES[kind](target, shared, ctx)}) x`,
    ];
  });
}

/** The rows of `candidateBranches`, by kind; rows of other kinds are left out. */
export function candidateRowsOf(rows: readonly { kind: string; row: unknown }[]): CandidateRows {
  const out: CandidateRows = { chunk: [], fact: [], observation: [], entity: [] };
  for (const r of rows) {
    if (!Object.hasOwn(BRANCHES, r.kind)) continue;
    (out[r.kind as keyof CandidateRows] as unknown[]).push(
      typeof r.row === 'string' ? JSON.parse(r.row) : r.row,
    );
  }
  return out;
}

const ID_TYPES: Readonly<Record<keyof CandidatePairs, string>> = {
  chunk: 'bigint[]',
  fact: 'text[]',
  observation: 'text[]',
  entity: 'text[]',
};

/**
 * The rows of every candidate asked for, by kind, in one statement. Rows of pairs that were
 * not asked for (an id present in another requested namespace) are left for the caller to drop.
 */
export async function readCandidates(
  q: Queryable,
  pairs: CandidatePairs,
  ctx: CandidateReadContext,
): Promise<CandidateRows> {
  const targets: CandidateTargets = {};
  for (const kind of Object.keys(BRANCHES) as (keyof CandidatePairs)[]) {
    const list = pairs[kind];
    if (list.length === 0) continue;
    targets[kind] = {
      namespaces: [...new Set(list.map((p) => p.namespace))],
      ids: sql`${list.map((p) => p.id)}::${raw(ID_TYPES[kind])}`,
    };
  }
  const branches = candidateBranches(targets, ctx);
  if (branches.length === 0) return { chunk: [], fact: [], observation: [], entity: [] };
  const { rows } = await run<{ kind: string; row: unknown }>(
    q,
    sql`/* contextHydrateCandidates */
     ${join(branches, '\n     UNION ALL\n     ')}`,
  );
  return candidateRowsOf(rows);
}
