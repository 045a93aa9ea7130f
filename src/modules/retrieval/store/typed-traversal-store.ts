import type { Queryable } from '../../../db/database.js';
import { FACT_COLUMNS, type FactRow } from '../../../kernel/store/fact-store.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';
import { factVisible, validAt, visible } from '../../../kernel/store/visibility.js';

/**
 * Typed traversal's SQL: anchor candidates, one breadth level of a step, entities as of a time,
 * and the persisted trace. Every statement carries the namespace predicate and `visible` on
 * entities and facts (a hidden endpoint hides its edge). Keys are ordered with COLLATE "C" so
 * the output is the same on every backend and locale.
 */

/** One way an anchor might name an entity; the resolver tries them in `ord` order. */
export interface AnchorCandidate {
  /** Anchor index. */
  i: number;
  /** Preference within the anchor's route (lower first). */
  ord: number;
  /** Kinds the entity may have; null = any kind. */
  kinds: string[] | null;
  key?: string | null;
  /** SQL LIKE pattern (escape `\`) the key must match. */
  pattern?: string | null;
  /** Containment the attributes must satisfy. */
  attrs?: Record<string, string> | null;
  /** A value of the entity's own `aliases`. */
  alias?: string | null;
}

export interface AnchorMatch {
  i: number;
  ord: number;
  key: string;
  kind: string;
}

/**
 * Entities matching each candidate (at most `perCandidate` each), by anchor, candidate, key.
 * One arm per kind of candidate, each through its own index — the primary key for a key, the
 * GIN indexes for an entity alias or attributes, the (namespace, kind, key) index for a
 * pattern — behind a gate on the candidate's shape (a one-time filter per candidate row), so
 * no arm scans the namespace's entities for a candidate it cannot match.
 */
export async function matchAnchorCandidates(
  q: Queryable,
  namespace: string,
  candidates: readonly AnchorCandidate[],
  perCandidate: number,
  visibleScopes: string[] | null,
): Promise<AnchorMatch[]> {
  if (candidates.length === 0) return [];
  const ns = param(namespace);
  // Checks every arm repeats (an arm's own index condition is written again, plainly, so the
  // planner can use it): the candidate's kinds, pattern, attributes and alias, and visibility.
  const common = sql`e.namespace = ${ns} AND (c.kinds IS NULL OR e.kind = ANY(c.kinds))
           AND (c.pattern IS NULL OR e.key LIKE c.pattern)
           AND (c.attrs IS NULL OR e.attributes @> c.attrs)
           AND (c.alias IS NULL OR e.aliases @> ARRAY[c.alias])
           AND ${visible('e', visibleScopes)}`;
  const { rows } = await run<AnchorMatch>(
    q,
    sql`/* matchAnchorCandidates */
     SELECT c.i, c.ord, x.key, x.kind
     FROM jsonb_to_recordset(${
       // A JSON string: an array parameter would be sent as a PostgreSQL array by node-postgres.
       JSON.stringify(
         candidates.map((c) => ({
           i: c.i,
           ord: c.ord,
           kinds: c.kinds,
           key: c.key ?? null,
           pattern: c.pattern ?? null,
           attrs: c.attrs ?? null,
           alias: c.alias ?? null,
         })),
       )
     }::jsonb) AS c(i int, ord int, kinds text[], key text, pattern text, attrs jsonb, alias text)
     CROSS JOIN LATERAL (
       SELECT m.key, m.kind FROM (
         SELECT e.key, e.kind FROM entities e
         WHERE c.key IS NOT NULL AND e.key = c.key AND ${common}
         UNION ALL
         SELECT e.key, e.kind FROM entities e
         WHERE c.key IS NULL AND c.alias IS NOT NULL AND e.aliases @> ARRAY[c.alias] AND ${common}
         UNION ALL
         SELECT e.key, e.kind FROM entities e
         WHERE c.key IS NULL AND c.alias IS NULL AND c.attrs IS NOT NULL AND e.attributes @> c.attrs
           AND ${common}
         UNION ALL
         SELECT e.key, e.kind FROM entities e
         WHERE c.key IS NULL AND c.alias IS NULL AND c.attrs IS NULL AND ${common}
       ) m
       ORDER BY m.key COLLATE "C"
       LIMIT ${perCandidate}
     ) x
     ORDER BY c.i, c.ord, x.key COLLATE "C"`,
  );
  return rows.map((r) => ({ ...r, i: Number(r.i), ord: Number(r.ord) }));
}

export interface SemanticMatch {
  chunkId: number;
  key: string;
  kind: string;
  /** 1 − cosine distance. */
  score: number;
}

/**
 * The entities (of the given kinds; null = any) owning the chunks nearest to `embedding`, best
 * first: HNSW over the namespace's chunks (the `pool` nearest), then the owners' kind. As in the
 * vector channel, pgvector's iterative scan is switched on for this statement only (set_config
 * inside LIMIT runs before the index is read), so the namespace filter does not starve the scan.
 */
export async function nearestOwners(
  q: Queryable,
  namespace: string,
  embedding: readonly number[],
  kinds: readonly string[] | null,
  pool: number,
  visibleScopes: string[] | null,
): Promise<SemanticMatch[]> {
  const nsParam = param(namespace);
  const p2 = param(`[${embedding.join(',')}]`);
  const kindsParam = param(kinds);
  const scopesParam = param(visibleScopes);
  const { rows } = await run<{ chunkId: unknown; key: string; kind: string; score: unknown }>(
    q,
    sql`/* typedNearestOwners */
     SELECT n.chunk_id AS "chunkId", e.key, e.kind, 1 - n.distance AS score
     FROM (
       SELECT c.chunk_id, c.node_key, c.embedding <=> ${p2}::vector AS distance
       FROM chunks c
       WHERE c.namespace = ${nsParam} AND c.embedding IS NOT NULL AND ${visible('c', scopesParam)}
       ORDER BY c.embedding <=> ${p2}::vector
       LIMIT (SELECT ${pool}::int FROM (SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
                                          set_config('hnsw.ef_search', '100', true)) AS hnsw_settings)
     ) n
     JOIN entities e ON e.namespace = ${nsParam} AND e.key = n.node_key
     WHERE (${kindsParam}::text[] IS NULL OR e.kind = ANY(${kindsParam}::text[])) AND ${visible('e', scopesParam)}
     ORDER BY n.distance, e.key COLLATE "C", n.chunk_id`,
  );
  return rows.map((r) => ({ chunkId: Number(r.chunkId), key: r.key, kind: r.kind, score: Number(r.score) }));
}

export interface LevelQuery {
  frontier: string[];
  relation: string;
  direction: 'OUT' | 'IN' | 'BOTH';
  /** Facts valid at this instant are walked. */
  asOf: Date;
  /** Every entity already in the result: edges back to them are kept, they are never new. */
  seen: string[];
  /** How many new entities this level may still add. */
  remaining: number;
  /** Bound on the edges returned. */
  edgeCap: number;
}

export type LevelEdge = FactRow & { fromKey: string; other: string; isNew: boolean };

/**
 * One breadth level: the facts of `relation` valid at `asOf` leaving the frontier in the
 * direction asked, whose other endpoint exists and is visible. The new entities are the first
 * `remaining` unseen endpoints by key; returned edges lead to them or to already-seen ones.
 */
export async function traversalLevel(
  q: Queryable,
  namespace: string,
  level: LevelQuery,
  visibleScopes: string[] | null,
): Promise<LevelEdge[]> {
  if (level.frontier.length === 0) return [];
  const live = validAt('f', level.asOf, 'served');
  const nsParam = param(namespace);
  const frontierParam = param(level.frontier);
  const relationParam = param(level.relation);
  const scopesParam = param(visibleScopes);
  const seenParam = param(level.seen);
  const { rows } = await run<LevelEdge>(
    q,
    sql`/* typedTraversalLevel */
     WITH edges AS (
       SELECT ${raw(FACT_COLUMNS)}, f.subject AS "fromKey", f.object AS other
       FROM facts f
       WHERE ${level.direction !== 'IN'}::boolean AND f.namespace = ${nsParam} AND f.subject = ANY(${frontierParam}::text[]) AND f.predicate = ${relationParam}
         AND ${live} AND ${factVisible('f', scopesParam)}
       UNION ALL
       SELECT ${raw(FACT_COLUMNS)}, f.object AS "fromKey", f.subject AS other
       FROM facts f
       WHERE ${level.direction !== 'OUT'}::boolean AND f.namespace = ${nsParam} AND f.object = ANY(${frontierParam}::text[]) AND f.predicate = ${relationParam}
         AND ${live} AND ${factVisible('f', scopesParam)}
     ), reachable AS (
       SELECT ed.* FROM edges ed
     ), picked AS (
       SELECT r.other FROM reachable r WHERE r.other <> ALL(${seenParam}::text[])
       GROUP BY r.other ORDER BY r.other COLLATE "C" LIMIT ${level.remaining}
     )
     SELECT r.*, (r.other IN (SELECT other FROM picked)) AS "isNew"
     FROM reachable r
     WHERE r.other IN (SELECT other FROM picked) OR r.other = ANY(${seenParam}::text[])
     ORDER BY r.other COLLATE "C", r."factId" COLLATE "C", r."fromKey" COLLATE "C"
     LIMIT ${level.edgeCap}`,
  );
  return rows;
}

export interface EntityAsOf {
  key: string;
  kind: string;
  title: string;
  /** The attribute version in force at asOf; null when none was. */
  attributes: Record<string, unknown> | null;
  attributesFrom: Date | null;
  stale: boolean;
  placeholder: boolean;
  sourcePath: string | null;
  snapshotId: string | null;
  snapshotScope: string | null;
  visibility: string[];
  pii: boolean;
}

/** Entities with the title and attributes of the version in force at `asOf`. */
export async function entitiesAsOf(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  asOf: Date,
  visibleScopes: string[] | null,
): Promise<EntityAsOf[]> {
  if (keys.length === 0) return [];
  const atParam = param(asOf);
  const { rows } = await run<EntityAsOf>(
    q,
    sql`/* typedEntitiesAsOf */
     SELECT e.key, e.kind, coalesce(v.title, e.title) AS title, v.attributes, v.valid_from AS "attributesFrom",
            e.stale, e.placeholder, e.source_path AS "sourcePath", e.snapshot_id AS "snapshotId",
            e.snapshot_scope AS "snapshotScope", e.visibility, e.pii
     FROM entities e
     LEFT JOIN LATERAL (
       SELECT v.title, v.attributes, v.valid_from FROM entity_versions v
       WHERE v.namespace = e.namespace AND v.key = e.key AND v.valid_from <= ${atParam}::timestamptz
         AND (v.valid_to IS NULL OR v.valid_to > ${atParam}::timestamptz)
       ORDER BY v.valid_from DESC LIMIT 1
     ) v ON true
     WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[]) AND ${visible('e', visibleScopes)}
     ORDER BY e.key COLLATE "C"`,
  );
  return rows;
}

export interface TypedTraceWrite {
  namespace: string;
  traceId: string;
  principalId: string;
  request: Record<string, unknown>;
  channels: unknown;
  decisions: unknown[];
  visibility: string[];
}

/**
 * Persists a typed traversal's trace (kind 'typed', readable through `contextTrace`). The trace
 * id is derived from the request and its result, so an identical traversal finds its trace
 * already stored and keeps it.
 */
export async function insertTypedTraces(q: Queryable, traces: readonly TypedTraceWrite[]): Promise<void> {
  if (traces.length === 0) return;
  await run(
    q,
    sql`/* insertTypedTraces */
     INSERT INTO context_traces (namespace, trace_id, kind, principal_id, request, channels, decisions, visibility)
     SELECT t.namespace, t.trace_id, 'typed', t.principal_id, t.request, t.channels, t.decisions, t.visibility
     FROM jsonb_to_recordset(${JSON.stringify(
       traces.map((t) => ({
         namespace: t.namespace,
         trace_id: t.traceId,
         principal_id: t.principalId,
         request: t.request,
         channels: t.channels,
         decisions: t.decisions,
         visibility: t.visibility,
       })),
     )}::jsonb) AS t(namespace text, trace_id text, principal_id text,
          request jsonb, channels jsonb, decisions jsonb, visibility text[])
     ON CONFLICT (namespace, trace_id) DO NOTHING`,
  );
}
