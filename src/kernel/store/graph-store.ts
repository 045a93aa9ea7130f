import type { Queryable } from '../../db/database.js';
import { type ChunkRow, CHUNK_COLUMNS } from './chunk-store.js';
import { FACT_COLUMNS, type FactRow } from './fact-store.js';
import { OBSERVATION_COLUMNS, type ObservationRow } from './observation-store.js';
import { factVisible, visible } from './visibility.js';
import { empty, ident, Param, param, raw, run, type SqlFragment, sql } from './sql.js';

/**
 * Graph reads: facts of entities, neighbourhoods, paths, timelines, evidence. Every statement
 * is batched over many parents (`ANY`/`unnest` of keys) so one GraphQL nesting level costs
 * one statement, carries the namespace predicate, and applies `visible` to the fact and to
 * both of its endpoints.
 */

export type Direction = 'OUT' | 'IN' | 'BOTH';

/** Keyset position of a time-ordered row: microseconds since the epoch (exact) and a tiebreak id. */
export interface TimeCursor {
  micros: string;
  id: string;
}

/** A row of a time-ordered page, with the exact sort key for its cursor. */
export type Cursored<T> = T & { parent: string; cursorTs: string };
/** An observation of a page: its cursor is (occurredAt, arrival), the order pages are read in. */
export type ObservationPageRow = Cursored<ObservationRow> & { cursorArrival: string };

// Exact (microsecond) timestamp <-> text, so cursors never lose the precision timestamptz keeps.
const micros = (col: string) => sql`(extract(epoch FROM ${ident(col)}) * 1000000)::int8::text`;
const fromMicros = (value: Param) => sql`(timestamptz 'epoch' + ${value}::int8 * interval '1 microsecond')`;

/**
 * Facts served as current at `asOf` (default now): valid on [from, to) with from ≤ asOf < to,
 * and neither retracted nor without evidence. A superseded fact still answers for the time
 * it was valid, which is what its closed `valid_to` records.
 */
const liveAt = (asOf: Param) => sql`f.status IN ('ACTIVE', 'SUPERSEDED')
  AND f.valid_from <= coalesce(${asOf}::timestamptz, now())
  AND (f.valid_to IS NULL OR f.valid_to > coalesce(${asOf}::timestamptz, now()))`;

/** With history: every status and interval, bounded only by an explicit asOf (started by then). */
const historyUntil = (asOf: Param) =>
  sql`(${asOf}::timestamptz IS NULL OR f.valid_from <= ${asOf}::timestamptz)`;

/** `predicates` bound, or constant NULL in a statement that never filters by predicate. */
const predicatesMatch = (predicates: Param | SqlFragment) =>
  sql`(${predicates}::text[] IS NULL OR f.predicate = ANY(${predicates}::text[]))`;

// ------------------------------------------------------------------ facts of entities

export interface EntityFactsQuery {
  asOf: Date | null;
  predicates: string[] | null;
  direction: Direction;
  includeHistory: boolean;
  /** Rows per parent (page size + 1 to learn whether more exist). */
  limit: number;
  cursor: TimeCursor | null;
  /** Oldest first from `cursor` (a `last/before` page); rows still come back newest first. */
  backwards: boolean;
}

/** The values (bound once per statement) one side of an entity's facts is filtered by. */
export interface EntityFactsParams {
  namespace: Param;
  /** The entity key the facts must touch: a column of the statement (`k.key`, `e0.key`). */
  parentKey: string;
  predicates: Param;
  asOf: Param;
  scopes: Param;
  /** Keyset cursor values; absent for counts. */
  cursor?: { micros: Param; id: Param };
  /**
   * `parentKey` names a row the statement itself read under the visibility predicate (a
   * nested read's parent entity), so that endpoint is not probed again for every fact.
   */
  parentVisible?: boolean;
  /** The statement joins the fact's other endpoint under the visibility predicate itself. */
  otherVisible?: boolean;
}

/** The values of an entity facts query, each bound once in the statement that uses them. */
export function entityFactsParams(
  namespace: string | Param,
  query: Pick<EntityFactsQuery, 'predicates' | 'asOf' | 'cursor'>,
  scopes: Param,
): Omit<EntityFactsParams, 'parentKey'> & { cursor: { micros: Param; id: Param } } {
  return {
    namespace: namespace instanceof Param ? namespace : param(namespace),
    predicates: param(query.predicates),
    asOf: param(query.asOf),
    scopes,
    cursor: { micros: param(query.cursor?.micros ?? null), id: param(query.cursor?.id ?? null) },
  };
}

/**
 * The WHERE of one side (`subject` or `object`) of an entity's facts: namespace, predicates,
 * time (live at asOf, or history), visibility with both endpoints, and the keyset cursor. A
 * self-loop is listed once, on its subject side. Shared by the batched loader statement and
 * the nested-read compiler, so both filter alike.
 */
export function entityFactsWhere(
  side: 'subject' | 'object',
  q: Pick<EntityFactsQuery, 'includeHistory' | 'backwards'>,
  p: EntityFactsParams,
): SqlFragment {
  const time = q.includeHistory ? historyUntil(p.asOf) : liveAt(p.asOf);
  const cmp = raw(q.backwards ? '>' : '<');
  const cursor = p.cursor
    ? sql`(${p.cursor.micros}::text IS NULL OR (f.valid_from, f.fact_id) ${cmp} (${fromMicros(p.cursor.micros)}, ${p.cursor.id}::text))`
    : raw('true');
  const parentKey = ident(p.parentKey);
  const selfLoop = side === 'object' ? sql`AND f.subject <> ${parentKey}` : empty;
  return sql`f.namespace = ${p.namespace} AND ${ident(`f.${side}`)} = ${parentKey} ${selfLoop}
          AND ${predicatesMatch(p.predicates)} AND ${time} AND ${factVisible('f', p.scopes, checkedEndpoints(side, p))} AND ${cursor}`;
}

function checkedEndpoints(side: 'subject' | 'object', p: EntityFactsParams): ('subject' | 'object')[] {
  const other: 'subject' | 'object' = side === 'subject' ? 'object' : 'subject';
  return [...(p.parentVisible ? [side] : []), ...(p.otherVisible ? [other] : [])];
}

/** The exact microsecond sort key of a fact as text (what its cursor carries). */
export const factCursorMicros = (alias: string) => micros(`${alias}.valid_from`);

function entityFactsSql(
  q: Pick<
    EntityFactsQuery,
    'includeHistory' | 'backwards' | 'predicates' | 'asOf' | 'cursor' | 'limit' | 'direction'
  >,
  namespace: string,
  keys: readonly string[],
  scopes: string[] | null,
  count: boolean,
): SqlFragment {
  const order = raw(q.backwards ? 'ASC' : 'DESC');
  const { cursor, ...shared } = entityFactsParams(namespace, q, param(scopes));
  const params = { ...shared, parentKey: 'k.key' };
  const limit = param(q.limit);
  const branch = (side: 'subject' | 'object', enabled: boolean) => {
    const where = sql`${enabled}::boolean AND ${entityFactsWhere(side, q, count ? params : { ...params, cursor })}`;
    return count
      ? sql`(SELECT count(*) FROM facts f WHERE ${where})`
      : sql`(SELECT ${raw(FACT_COLUMNS)}, ${micros('f.valid_from')} AS "cursorTs" FROM facts f
          WHERE ${where}
          ORDER BY f.valid_from ${order}, f.fact_id ${order} LIMIT ${limit})`;
  };
  const out = q.direction !== 'IN';
  const into = q.direction !== 'OUT';
  if (count) {
    return sql`/* countFactsOfEntities */
      SELECT k.key AS parent, (${branch('subject', out)} + ${branch('object', into)})::int AS n
      FROM unnest(${keys}::text[]) AS k(key)`;
  }
  return sql`/* factsOfEntities */
    SELECT k.key AS parent, x.*
    FROM unnest(${keys}::text[]) AS k(key)
    CROSS JOIN LATERAL (
      SELECT * FROM (${branch('subject', out)} UNION ALL ${branch('object', into)}) u
      ORDER BY u."validFrom" ${order}, u."factId" ${order}
      LIMIT ${limit}
    ) x`;
}

/** Up to `limit` facts per entity key, newest valid_from first (per key, in that order). */
export async function factsOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  query: EntityFactsQuery,
  visibleScopes: string[] | null,
): Promise<Map<string, Cursored<FactRow>[]>> {
  const { rows } = await run<Cursored<FactRow>>(
    q,
    entityFactsSql(query, namespace, keys, visibleScopes, false),
  );
  const out = groupByParent(rows);
  if (query.backwards) for (const list of out.values()) list.reverse();
  return out;
}

export async function countFactsOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  query: Pick<EntityFactsQuery, 'asOf' | 'predicates' | 'direction' | 'includeHistory'>,
  visibleScopes: string[] | null,
): Promise<Map<string, number>> {
  const counted = { ...query, backwards: false, cursor: null, limit: 0 };
  const { rows } = await run<{ parent: string; n: number }>(
    q,
    entityFactsSql(counted, namespace, keys, visibleScopes, true),
  );
  return new Map(rows.map((r) => [r.parent, Number(r.n)]));
}

// ------------------------------------------------------------------ neighbourhoods

export interface NeighborQuery {
  hops: 1 | 2;
  predicates: string[] | null;
  asOf: Date | null;
  /** Distinct neighbours kept per anchor. */
  limit: number;
  /** Edges followed out of each visited node, per direction (the bound on edges). */
  fanout: number;
}

export interface NeighborHit {
  anchor: string;
  key: string;
  distance: number;
  factId: string;
  /** The first-hop entity a distance-2 neighbour was reached through. */
  through: string | null;
}

/**
 * One hop of an undirected walk from `node`: the newest `fanout` live edges each way whose far
 * endpoint is visible and not yet on the path. Index-ordered LATERAL + LIMIT keeps a node with
 * 10k edges as cheap as one with 40.
 */
function stepSql(
  walk: string,
  pathCol: string,
  p: { namespace: Param; asOf: Param; preds: SqlFragment; scopes: Param; fanout: Param },
): SqlFragment {
  const side = (near: 'subject' | 'object') => {
    const far = raw(near === 'subject' ? 'f.object' : 'f.subject');
    return sql`(SELECT ${far} AS other, f.fact_id, f.valid_from, f.confidence FROM facts f
      WHERE f.namespace = ${p.namespace} AND ${ident(`f.${near}`)} = ${ident(`${walk}.node`)} ${near === 'object' ? raw('AND f.subject <> f.object') : empty}
        AND ${liveAt(p.asOf)} AND ${p.preds} AND ${factVisible('f', p.scopes)}
      ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${p.fanout})`;
  };
  return sql`SELECT u.other, u.fact_id, u.valid_from, u.confidence
    FROM (${side('subject')} UNION ALL ${side('object')}) u
    WHERE u.other <> ALL (${ident(`${walk}.${pathCol}`)})
    ORDER BY u.valid_from DESC, u.fact_id DESC
    LIMIT ${p.fanout}`;
}

/**
 * Neighbours of each anchor up to `hops` away, nearest first, at most `limit` per anchor, each
 * with the fact it was reached through. A recursive walk with the path as cycle protection;
 * depth ≤ hops (≤ 2), at most `fanout` edges per node, `limit` nodes per anchor.
 */
export async function neighborsOfEntities(
  q: Queryable,
  namespace: string,
  anchors: readonly string[],
  query: NeighborQuery,
  visibleScopes: string[] | null,
): Promise<Map<string, NeighborHit[]>> {
  const step = stepSql('w', 'path', {
    namespace: param(namespace),
    asOf: param(query.asOf),
    preds: predicatesMatch(param(query.predicates)),
    scopes: param(visibleScopes),
    fanout: param(query.fanout),
  });
  const { rows } = await run<NeighborHit & { parent: string }>(
    q,
    sql`/* neighborsOfEntities */
     WITH RECURSIVE walk(anchor, node, depth, path, fact_id, valid_from, confidence) AS (
       SELECT a, a, 0, ARRAY[a], NULL::text, NULL::timestamptz, NULL::real FROM unnest(${anchors}::text[]) AS a
       UNION ALL
       SELECT w.anchor, s.other, w.depth + 1, w.path || s.other, s.fact_id, s.valid_from, s.confidence
       FROM walk w CROSS JOIN LATERAL (${step}) s
       WHERE w.depth < ${query.hops}
     ),
     best AS (
       SELECT DISTINCT ON (anchor, node) anchor, node, depth, path, fact_id, valid_from, confidence
       FROM walk WHERE depth > 0
       ORDER BY anchor, node, depth, confidence DESC, valid_from DESC, fact_id
     ),
     ranked AS (
       SELECT b.*, row_number() OVER (
         PARTITION BY anchor ORDER BY depth, confidence DESC, valid_from DESC, node) AS rn
       FROM best b
     )
     SELECT anchor AS parent, anchor, node AS key, depth AS distance, fact_id AS "factId",
            CASE WHEN depth > 1 THEN path[2] END AS through
     FROM ranked WHERE rn <= ${query.limit}
     ORDER BY anchor, rn`,
  );
  return groupByParent(rows);
}

// ------------------------------------------------------------------ paths

export interface PathQuery {
  maxHops: number;
  asOf: Date | null;
  /** Edges followed out of each visited node, per direction. */
  fanout: number;
  /** Rows of the join kept before de-duplication. */
  rowLimit: number;
}

export interface PathHalfRow {
  fnodes: string[];
  ffacts: string[];
  bnodes: string[];
  bfacts: string[];
  hops: number;
}

/**
 * Shortest undirected paths between two entities: two recursive walks, from each end to half
 * of maxHops, joined where they meet (both walks bounded in depth, in edges per node, with the
 * path as cycle protection). Rows are the two halves; the caller stitches and de-duplicates.
 */
export async function shortestPathHalves(
  q: Queryable,
  namespace: string,
  from: string,
  to: string,
  query: PathQuery,
  visibleScopes: string[] | null,
): Promise<PathHalfRow[]> {
  const params = {
    namespace: param(namespace),
    asOf: param(query.asOf),
    preds: predicatesMatch(raw('NULL')),
    scopes: param(visibleScopes),
    fanout: param(query.fanout),
  };
  const [start, end] = [param(from), param(to)];
  const walk = (
    name: string,
    first: Param,
    stop: Param,
    depth: number,
  ) => sql`${ident(name)}(node, depth, nodes, facts) AS (
      SELECT ${first}::text, 0, ARRAY[${first}::text], ARRAY[]::text[]
      UNION ALL
      SELECT s.other, w.depth + 1, w.nodes || s.other, w.facts || s.fact_id
      FROM ${ident(name)} w CROSS JOIN LATERAL (${stepSql('w', 'nodes', params)}) s
      WHERE w.depth < ${depth} AND w.node <> ${stop}::text
    )`;
  const { rows } = await run<PathHalfRow>(
    q,
    sql`/* shortestPathHalves */
     WITH RECURSIVE ${walk('fwd', start, end, Math.ceil(query.maxHops / 2))}, ${walk('bwd', end, start, Math.floor(query.maxHops / 2))},
     joined AS (
       SELECT f.nodes AS fnodes, f.facts AS ffacts, b.nodes AS bnodes, b.facts AS bfacts, f.depth + b.depth AS hops
       FROM fwd f JOIN bwd b ON b.node = f.node
       WHERE NOT (f.nodes[1:f.depth] && b.nodes) AND f.depth + b.depth > 0
     )
     SELECT * FROM joined WHERE hops = (SELECT min(hops) FROM joined) LIMIT ${query.rowLimit}`,
  );
  return rows;
}

// ------------------------------------------------------------------ attributes as of

export interface AttributeVersionRow {
  key: string;
  title: string;
  attributes: Record<string, unknown>;
  validFrom: Date;
  validTo: Date | null;
}

/** The attribute version in force at `asOf` for each visible entity; absent when none was. */
export async function attributeVersionsAt(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  asOf: Date,
  visibleScopes: string[] | null,
): Promise<Map<string, AttributeVersionRow>> {
  const atParam = param(asOf);
  const { rows } = await run<AttributeVersionRow>(
    q,
    sql`/* attributeVersionsAt */
     SELECT v.key, v.title, v.attributes, v.valid_from AS "validFrom", v.valid_to AS "validTo"
     FROM entities e
     JOIN entity_versions v ON v.namespace = e.namespace AND v.key = e.key
     WHERE e.namespace = ${namespace} AND e.key = ANY(${keys}::text[]) AND ${visible('e', visibleScopes)}
       AND v.valid_from <= ${atParam}::timestamptz AND (v.valid_to IS NULL OR v.valid_to > ${atParam}::timestamptz)`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}

// ------------------------------------------------------------------ chunks of entities

export interface OrdPageQuery {
  limit: number;
  afterOrder: number | null;
  beforeOrder: number | null;
  backwards: boolean;
}

/** Chunks of each entity in document order, `limit` per entity. */
export async function chunksOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  query: OrdPageQuery,
  visibleScopes: string[] | null,
): Promise<Map<string, (ChunkRow & { parent: string })[]>> {
  const order = raw(query.backwards ? 'DESC' : 'ASC');
  const afterOrderParam = param(query.afterOrder);
  const beforeOrderParam = param(query.beforeOrder);
  const { rows } = await run<ChunkRow & { parent: string }>(
    q,
    sql`/* chunksOfEntities */
     SELECT k.key AS parent, x.*
     FROM unnest(${keys}::text[]) AS k(key)
     CROSS JOIN LATERAL (
       SELECT ${raw(CHUNK_COLUMNS)} FROM chunks c
       WHERE c.namespace = ${namespace} AND c.node_key = k.key AND c.ord >= 0 AND ${visible('c', visibleScopes)}
         AND (${afterOrderParam}::int IS NULL OR c.ord > ${afterOrderParam}::int) AND (${beforeOrderParam}::int IS NULL OR c.ord < ${beforeOrderParam}::int)
       ORDER BY c.ord ${order} LIMIT ${query.limit}
     ) x`,
  );
  const out = groupByParent(rows);
  if (query.backwards) for (const list of out.values()) list.reverse();
  return out;
}

/** An entity's own chunks: its summaries (negative orders) are served by Entity.summary. */
export async function countChunksOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, number>> {
  const { rows } = await run<{ parent: string; n: number }>(
    q,
    sql`/* countChunksOfEntities */
     SELECT c.node_key AS parent, count(*)::int AS n FROM chunks c
     WHERE c.namespace = ${namespace} AND c.node_key = ANY(${keys}::text[]) AND c.ord >= 0
       AND ${visible('c', visibleScopes)}
     GROUP BY c.node_key`,
  );
  return new Map(rows.map((r) => [r.parent, Number(r.n)]));
}

// ------------------------------------------------------------------ observations

/** Observations an entity rests on: those that mention it and those that wrote its attributes. */
const evidenceOf = (namespace: Param, key: Param | SqlFragment) => sql`(
  SELECT m.observation_id FROM mentions m WHERE m.namespace = ${namespace} AND m.entity_key = ${key}
  UNION
  SELECT v.observation_id FROM entity_versions v
  WHERE v.namespace = ${namespace} AND v.key = ${key} AND v.observation_id IS NOT NULL)`;

export interface TimePageQuery {
  limit: number;
  cursor: TimeCursor | null;
  backwards: boolean;
}

/** Evidence of each entity, newest occurredAt first, `limit` per entity. */
export async function observationsOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  query: TimePageQuery,
  visibleScopes: string[] | null,
): Promise<Map<string, ObservationPageRow[]>> {
  const order = raw(query.backwards ? 'ASC' : 'DESC');
  const cmp = raw(query.backwards ? '>' : '<');
  const nsParam = param(namespace);
  const microsParam = param(query.cursor?.micros ?? null);
  const { rows } = await run<ObservationPageRow>(
    q,
    sql`/* observationsOfEntities */
     SELECT k.key AS parent, x.*
     FROM unnest(${keys}::text[]) AS k(key)
     CROSS JOIN LATERAL (
       SELECT ${raw(OBSERVATION_COLUMNS)}, ${micros('o.occurred_at')} AS "cursorTs", o.arrival::text AS "cursorArrival"
       FROM observations o
       WHERE o.namespace = ${nsParam} AND o.observation_id IN ${evidenceOf(nsParam, raw('k.key'))} AND ${visible('o', visibleScopes)}
         AND (${microsParam}::text IS NULL OR (o.occurred_at, o.arrival) ${cmp} (${fromMicros(microsParam)}, ${query.cursor?.id ?? null}::bigint))
       ORDER BY o.occurred_at ${order}, o.arrival ${order} LIMIT ${query.limit}
     ) x`,
  );
  const out = groupByParent(rows);
  if (query.backwards) for (const list of out.values()) list.reverse();
  return out;
}

export async function countObservationsOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, number>> {
  const nsParam = param(namespace);
  const { rows } = await run<{ parent: string; n: number }>(
    q,
    sql`/* countObservationsOfEntities */
     SELECT k.key AS parent,
       (SELECT count(*) FROM observations o
        WHERE o.namespace = ${nsParam} AND o.observation_id IN ${evidenceOf(nsParam, raw('k.key'))} AND ${visible('o', visibleScopes)})::int AS n
     FROM unnest(${keys}::text[]) AS k(key)`,
  );
  return new Map(rows.map((r) => [r.parent, Number(r.n)]));
}

export interface ObservationFilter {
  kinds: string[] | null;
  since: Date | null;
  until: Date | null;
}

/** Observations of a namespace, newest occurredAt first, filtered by kind and [since, until). */
export async function listObservations(
  q: Queryable,
  namespace: string,
  filter: ObservationFilter,
  page: TimePageQuery,
  visibleScopes: string[] | null,
): Promise<ObservationPageRow[]> {
  const order = raw(page.backwards ? 'ASC' : 'DESC');
  const cmp = raw(page.backwards ? '>' : '<');
  const nsParam = param(namespace);
  const kindsParam = param(filter.kinds);
  const sinceParam = param(filter.since);
  const untilParam = param(filter.until);
  const microsParam = param(page.cursor?.micros ?? null);
  const { rows } = await run<ObservationPageRow>(
    q,
    sql`/* listObservations */
     SELECT ${nsParam}::text AS parent, ${raw(OBSERVATION_COLUMNS)}, ${micros('o.occurred_at')} AS "cursorTs",
            o.arrival::text AS "cursorArrival"
     FROM observations o
     WHERE o.namespace = ${nsParam} AND (${kindsParam}::text[] IS NULL OR o.kind = ANY(${kindsParam}::text[]))
       AND (${sinceParam}::timestamptz IS NULL OR o.occurred_at >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR o.occurred_at < ${untilParam}::timestamptz)
       AND ${visible('o', visibleScopes)}
       AND (${microsParam}::text IS NULL OR (o.occurred_at, o.arrival) ${cmp} (${fromMicros(microsParam)}, ${page.cursor?.id ?? null}::bigint))
     ORDER BY o.occurred_at ${order}, o.arrival ${order}
     LIMIT ${page.limit}`,
  );
  return page.backwards ? rows.reverse() : rows;
}

export async function countObservations(
  q: Queryable,
  namespace: string,
  filter: ObservationFilter,
  visibleScopes: string[] | null,
): Promise<number> {
  const kindsParam = param(filter.kinds);
  const sinceParam = param(filter.since);
  const untilParam = param(filter.until);
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* countObservations */
     SELECT count(*)::int AS n FROM observations o
     WHERE o.namespace = ${namespace} AND (${kindsParam}::text[] IS NULL OR o.kind = ANY(${kindsParam}::text[]))
       AND (${sinceParam}::timestamptz IS NULL OR o.occurred_at >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR o.occurred_at < ${untilParam}::timestamptz)
       AND ${visible('o', visibleScopes)}`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Facts each observation is evidence for (every status but EVIDENCE_LOST: an observation
 * still supports the superseded version it asserted), oldest first, `limit` per observation.
 */
export async function factsOfObservations(
  q: Queryable,
  namespace: string,
  observationIds: readonly string[],
  limit: number,
  visibleScopes: string[] | null,
): Promise<Map<string, FactRow[]>> {
  const { rows } = await run<FactRow & { parent: string }>(
    q,
    sql`/* factsOfObservations */
     SELECT k.id AS parent, x.*
     FROM unnest(${observationIds}::text[]) AS k(id)
     CROSS JOIN LATERAL (
       SELECT ${raw(FACT_COLUMNS)} FROM facts f
       WHERE f.namespace = ${namespace} AND f.observation_ids @> ARRAY[k.id] AND f.status <> 'EVIDENCE_LOST'
         AND ${factVisible('f', visibleScopes)}
       ORDER BY f.valid_from, f.fact_id LIMIT ${limit}
     ) x`,
  );
  return groupByParent(rows);
}

/**
 * Keys of the episodes each observation gave rise to: the write side records them as mentions
 * with role `episode` (see mention-store).
 */
export async function episodeKeysOfObservations(
  q: Queryable,
  namespace: string,
  observationIds: readonly string[],
  limit: number,
  visibleScopes: string[] | null,
): Promise<Map<string, string[]>> {
  const { rows } = await run<{ parent: string; key: string }>(
    q,
    sql`/* episodeKeysOfObservations */
     SELECT k.id AS parent, x.key
     FROM unnest(${observationIds}::text[]) AS k(id)
     CROSS JOIN LATERAL (
       SELECT e.key FROM mentions m
       JOIN entities e ON e.namespace = m.namespace AND e.key = m.entity_key
       WHERE m.namespace = ${namespace} AND m.observation_id = k.id AND m.role = 'episode' AND ${visible('e', visibleScopes)}
       ORDER BY e.key LIMIT ${limit}
     ) x`,
  );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.parent) ?? [];
    list.push(r.key);
    out.set(r.parent, list);
  }
  return out;
}

// ------------------------------------------------------------------ provenance

export interface EntitySourceRow {
  key: string;
  provenance: Record<string, unknown> | null;
  hasContent: boolean;
  /** Newest evidence first, at most the limit asked for. */
  observationIds: string[];
}

/** What an entity rests on: its document provenance (retained sources) and its evidence. */
export async function entitySources(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  evidenceLimit: number,
  visibleScopes: string[] | null,
): Promise<Map<string, EntitySourceRow>> {
  const nsParam = param(namespace);
  const scopesParam = param(visibleScopes);
  const { rows } = await run<EntitySourceRow>(
    q,
    sql`/* entitySources */
     SELECT e.key, e.provenance, e.content IS NOT NULL AS "hasContent",
       ARRAY(SELECT o.observation_id FROM observations o
             WHERE o.namespace = ${nsParam} AND o.observation_id IN ${evidenceOf(nsParam, raw('e.key'))} AND ${visible('o', scopesParam)}
             ORDER BY o.occurred_at DESC, o.arrival DESC LIMIT ${evidenceLimit}) AS "observationIds"
     FROM entities e
     WHERE e.namespace = ${nsParam} AND e.key = ANY(${keys}::text[]) AND ${visible('e', scopesParam)}`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}

// ------------------------------------------------------------------ timeline

export type TimelineKind = 'FACT_CLOSED' | 'FACT_OPENED' | 'OBSERVATION';

export interface TimelineRow {
  kind: TimelineKind;
  /** Order of kinds at the same instant: a closing before the opening that replaces it. */
  rank: number;
  at: Date;
  itemId: string;
  /** The arrival of an observation (ties of `at` between observations), 0 for facts. */
  seq: string;
  cursorTs: string;
}

export interface TimelineQuery {
  since: Date | null;
  until: Date | null;
  limit: number;
  cursor: TimelineCursor | null;
  backwards: boolean;
}

export interface TimelineCursor {
  micros: string;
  rank: number;
  seq: string;
  id: string;
}

/**
 * What happened to an entity in time order: each fact it is an endpoint of opening (valid_from)
 * and closing (valid_to) — superseded and retracted versions included — and each observation
 * it rests on. Events fall in [since, until).
 */
export async function entityTimeline(
  q: Queryable,
  namespace: string,
  key: string,
  query: TimelineQuery,
  visibleScopes: string[] | null,
): Promise<TimelineRow[]> {
  const order = raw(query.backwards ? 'DESC' : 'ASC');
  const cmp = raw(query.backwards ? '<' : '>');
  const nsParam = param(namespace);
  const keyParam = param(key);
  const sinceParam = param(query.since);
  const untilParam = param(query.until);
  const scopesParam = param(visibleScopes);
  const factWhere = sql`f.namespace = ${nsParam} AND (f.subject = ${keyParam} OR f.object = ${keyParam}) AND ${factVisible('f', scopesParam)}`;
  const microsParam = param(query.cursor?.micros ?? null);
  const { rows } = await run<TimelineRow>(
    q,
    sql`/* entityTimeline */
     SELECT ev.kind, ev.rank, ev.at, ev."itemId", ev.seq::text AS seq, ${micros('ev.at')} AS "cursorTs"
     FROM (
       SELECT 'FACT_CLOSED' AS kind, 0 AS rank, f.valid_to AS at, 0::bigint AS seq, f.fact_id AS "itemId"
       FROM facts f WHERE ${factWhere} AND f.valid_to IS NOT NULL
       UNION ALL
       SELECT 'FACT_OPENED', 1, f.valid_from, 0, f.fact_id FROM facts f WHERE ${factWhere}
       UNION ALL
       SELECT 'OBSERVATION', 2, o.occurred_at, o.arrival, o.observation_id FROM observations o
       WHERE o.namespace = ${nsParam} AND o.observation_id IN ${evidenceOf(nsParam, keyParam)} AND ${visible('o', scopesParam)}
     ) ev
     WHERE EXISTS (SELECT 1 FROM entities e WHERE e.namespace = ${nsParam} AND e.key = ${keyParam} AND ${visible('e', scopesParam)})
       AND (${sinceParam}::timestamptz IS NULL OR ev.at >= ${sinceParam}::timestamptz)
       AND (${untilParam}::timestamptz IS NULL OR ev.at < ${untilParam}::timestamptz)
       AND (${microsParam}::text IS NULL OR (ev.at, ev.rank, ev.seq, ev."itemId") ${cmp}
            (${fromMicros(microsParam)}, ${query.cursor?.rank ?? null}::int, ${query.cursor?.seq ?? null}::bigint, ${query.cursor?.id ?? null}::text))
     ORDER BY ev.at ${order}, ev.rank ${order}, ev.seq ${order}, ev."itemId" ${order}
     LIMIT ${query.limit}`,
  );
  return query.backwards ? rows.reverse() : rows;
}

function groupByParent<T extends { parent: string }>(rows: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.parent);
    if (list) list.push(r);
    else out.set(r.parent, [r]);
  }
  return out;
}
