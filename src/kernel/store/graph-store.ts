import type { Queryable } from '../../db/database.js';
import { type ChunkRow, CHUNK_COLUMNS } from './chunk-store.js';
import { FACT_COLUMNS, type FactRow } from './fact-store.js';
import { OBSERVATION_COLUMNS, type ObservationRow } from './observation-store.js';
import { factVisibleTo, visibleTo } from './visibility.js';

/**
 * Graph reads: facts of entities, neighbourhoods, paths, timelines, evidence. Every statement
 * is batched over many parents (`ANY`/`unnest` of keys) so one GraphQL nesting level costs
 * one statement, carries the namespace predicate, and applies `visibleTo` to the fact and to
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

// Exact (microsecond) timestamp <-> text, so cursors never lose the precision timestamptz keeps.
const micros = (col: string) => `(extract(epoch FROM ${col}) * 1000000)::int8::text`;
const fromMicros = (param: string) => `(timestamptz 'epoch' + ${param}::int8 * interval '1 microsecond')`;

/**
 * Facts served as current at `asOf` (default now): valid on [from, to) with from ≤ asOf < to,
 * and neither retracted nor without evidence. A superseded fact still answers for the time
 * it was valid, which is what its closed `valid_to` records.
 */
const liveAt = (asOfParam: string) => `f.status IN ('ACTIVE', 'SUPERSEDED')
  AND f.valid_from <= coalesce(${asOfParam}::timestamptz, now())
  AND (f.valid_to IS NULL OR f.valid_to > coalesce(${asOfParam}::timestamptz, now()))`;

/** With history: every status and interval, bounded only by an explicit asOf (started by then). */
const historyUntil = (asOfParam: string) =>
  `(${asOfParam}::timestamptz IS NULL OR f.valid_from <= ${asOfParam}::timestamptz)`;

const predicatesMatch = (param: string) =>
  `(${param}::text[] IS NULL OR f.predicate = ANY(${param}::text[]))`;

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

/** Placeholders (or SQL expressions) one side of an entity's facts is filtered by. */
export interface EntityFactsParams {
  namespace: string;
  /** The entity key the facts must touch (a column or placeholder). */
  parentKey: string;
  predicates: string;
  asOf: string;
  scopes: string;
  /** Keyset cursor placeholders; absent for counts. */
  cursor?: { micros: string; id: string };
  /**
   * `parentKey` names a row the statement itself read under the visibility predicate (a
   * nested read's parent entity), so that endpoint is not probed again for every fact.
   */
  parentVisible?: boolean;
  /** The statement joins the fact's other endpoint under the visibility predicate itself. */
  otherVisible?: boolean;
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
): string {
  const time = q.includeHistory ? historyUntil(p.asOf) : liveAt(p.asOf);
  const cmp = q.backwards ? '>' : '<';
  const cursor = p.cursor
    ? `(${p.cursor.micros}::text IS NULL OR (f.valid_from, f.fact_id) ${cmp} (${fromMicros(p.cursor.micros)}, ${p.cursor.id}::text))`
    : 'true';
  const selfLoop = side === 'object' ? `AND f.subject <> ${p.parentKey}` : '';
  return `f.namespace = ${p.namespace} AND f.${side} = ${p.parentKey} ${selfLoop}
          AND ${predicatesMatch(p.predicates)} AND ${time} AND ${factVisibleTo('f', p.scopes, checkedEndpoints(side, p))} AND ${cursor}`;
}

function checkedEndpoints(side: 'subject' | 'object', p: EntityFactsParams): ('subject' | 'object')[] {
  const other: 'subject' | 'object' = side === 'subject' ? 'object' : 'subject';
  return [...(p.parentVisible ? [side] : []), ...(p.otherVisible ? [other] : [])];
}

/** The exact microsecond sort key of a fact as text (what its cursor carries). */
export const factCursorMicros = (alias: string) => micros(`${alias}.valid_from`);

function entityFactsSql(q: Pick<EntityFactsQuery, 'includeHistory' | 'backwards'>, count: boolean): string {
  const order = q.backwards ? 'ASC' : 'DESC';
  const params = { namespace: '$1', parentKey: 'k.key', predicates: '$3', asOf: '$4', scopes: '$5' };
  const branch = (side: 'subject' | 'object', enabled: string) => {
    const where = `${enabled} AND ${entityFactsWhere(side, q, count ? params : { ...params, cursor: { micros: '$7', id: '$8' } })}`;
    return count
      ? `(SELECT count(*) FROM facts f WHERE ${where})`
      : `(SELECT ${FACT_COLUMNS}, ${micros('f.valid_from')} AS "cursorTs" FROM facts f
          WHERE ${where}
          ORDER BY f.valid_from ${order}, f.fact_id ${order} LIMIT $6)`;
  };
  if (count) {
    return `/* countFactsOfEntities */
      SELECT k.key AS parent, (${branch('subject', '$6::boolean')} + ${branch('object', '$7::boolean')})::int AS n
      FROM unnest($2::text[]) AS k(key)`;
  }
  return `/* factsOfEntities */
    SELECT k.key AS parent, x.*
    FROM unnest($2::text[]) AS k(key)
    CROSS JOIN LATERAL (
      SELECT * FROM (${branch('subject', '$9::boolean')} UNION ALL ${branch('object', '$10::boolean')}) u
      ORDER BY u."validFrom" ${order}, u."factId" ${order}
      LIMIT $6
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
  const { rows } = await q.query<Cursored<FactRow>>(entityFactsSql(query, false), [
    namespace,
    keys,
    query.predicates,
    query.asOf,
    visibleScopes,
    query.limit,
    query.cursor?.micros ?? null,
    query.cursor?.id ?? null,
    query.direction !== 'IN',
    query.direction !== 'OUT',
  ]);
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
  const { rows } = await q.query<{ parent: string; n: number }>(
    entityFactsSql({ includeHistory: query.includeHistory, backwards: false }, true),
    [
      namespace,
      keys,
      query.predicates,
      query.asOf,
      visibleScopes,
      query.direction !== 'IN',
      query.direction !== 'OUT',
    ],
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
  p: { asOf: string; preds: string; vis: string; fanout: string },
) {
  const side = (near: 'subject' | 'object') => {
    const far = near === 'subject' ? 'f.object' : 'f.subject';
    return `(SELECT ${far} AS other, f.fact_id, f.valid_from, f.confidence FROM facts f
      WHERE f.namespace = $1 AND f.${near} = ${walk}.node ${near === 'object' ? 'AND f.subject <> f.object' : ''}
        AND ${liveAt(p.asOf)} AND ${predicatesMatch(p.preds)} AND ${factVisibleTo('f', p.vis)}
      ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${p.fanout})`;
  };
  return `SELECT u.other, u.fact_id, u.valid_from, u.confidence
    FROM (${side('subject')} UNION ALL ${side('object')}) u
    WHERE u.other <> ALL (${walk}.${pathCol})
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
  const step = stepSql('w', 'path', { asOf: '$4', preds: '$3', vis: '$5', fanout: '$7' });
  const { rows } = await q.query<NeighborHit & { parent: string }>(
    `/* neighborsOfEntities */
     WITH RECURSIVE walk(anchor, node, depth, path, fact_id, valid_from, confidence) AS (
       SELECT a, a, 0, ARRAY[a], NULL::text, NULL::timestamptz, NULL::real FROM unnest($2::text[]) AS a
       UNION ALL
       SELECT w.anchor, s.other, w.depth + 1, w.path || s.other, s.fact_id, s.valid_from, s.confidence
       FROM walk w CROSS JOIN LATERAL (${step}) s
       WHERE w.depth < $6
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
     FROM ranked WHERE rn <= $8
     ORDER BY anchor, rn`,
    [namespace, anchors, query.predicates, query.asOf, visibleScopes, query.hops, query.fanout, query.limit],
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
  const params = { asOf: '$4', preds: 'NULL', vis: '$5', fanout: '$8' };
  const walk = (
    name: string,
    start: string,
    stop: string,
    depth: string,
  ) => `${name}(node, depth, nodes, facts) AS (
      SELECT ${start}::text, 0, ARRAY[${start}::text], ARRAY[]::text[]
      UNION ALL
      SELECT s.other, w.depth + 1, w.nodes || s.other, w.facts || s.fact_id
      FROM ${name} w CROSS JOIN LATERAL (${stepSql('w', 'nodes', params)}) s
      WHERE w.depth < ${depth} AND w.node <> ${stop}::text
    )`;
  const { rows } = await q.query<PathHalfRow>(
    `/* shortestPathHalves */
     WITH RECURSIVE ${walk('fwd', '$2', '$3', '$6')}, ${walk('bwd', '$3', '$2', '$7')},
     joined AS (
       SELECT f.nodes AS fnodes, f.facts AS ffacts, b.nodes AS bnodes, b.facts AS bfacts, f.depth + b.depth AS hops
       FROM fwd f JOIN bwd b ON b.node = f.node
       WHERE NOT (f.nodes[1:f.depth] && b.nodes) AND f.depth + b.depth > 0
     )
     SELECT * FROM joined WHERE hops = (SELECT min(hops) FROM joined) LIMIT $9`,
    [
      namespace,
      from,
      to,
      query.asOf,
      visibleScopes,
      Math.ceil(query.maxHops / 2),
      Math.floor(query.maxHops / 2),
      query.fanout,
      query.rowLimit,
    ],
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
  const { rows } = await q.query<AttributeVersionRow>(
    `/* attributeVersionsAt */
     SELECT v.key, v.title, v.attributes, v.valid_from AS "validFrom", v.valid_to AS "validTo"
     FROM entities e
     JOIN entity_versions v ON v.namespace = e.namespace AND v.key = e.key
     WHERE e.namespace = $1 AND e.key = ANY($2::text[]) AND ${visibleTo('e', '$4')}
       AND v.valid_from <= $3::timestamptz AND (v.valid_to IS NULL OR v.valid_to > $3::timestamptz)`,
    [namespace, keys, asOf, visibleScopes],
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
  const order = query.backwards ? 'DESC' : 'ASC';
  const { rows } = await q.query<ChunkRow & { parent: string }>(
    `/* chunksOfEntities */
     SELECT k.key AS parent, x.*
     FROM unnest($2::text[]) AS k(key)
     CROSS JOIN LATERAL (
       SELECT ${CHUNK_COLUMNS} FROM chunks c
       WHERE c.namespace = $1 AND c.node_key = k.key AND ${visibleTo('c', '$3')}
         AND ($4::int IS NULL OR c.ord > $4::int) AND ($5::int IS NULL OR c.ord < $5::int)
       ORDER BY c.ord ${order} LIMIT $6
     ) x`,
    [namespace, keys, visibleScopes, query.afterOrder, query.beforeOrder, query.limit],
  );
  const out = groupByParent(rows);
  if (query.backwards) for (const list of out.values()) list.reverse();
  return out;
}

export async function countChunksOfEntities(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<Map<string, number>> {
  const { rows } = await q.query<{ parent: string; n: number }>(
    `/* countChunksOfEntities */
     SELECT c.node_key AS parent, count(*)::int AS n FROM chunks c
     WHERE c.namespace = $1 AND c.node_key = ANY($2::text[]) AND ${visibleTo('c', '$3')}
     GROUP BY c.node_key`,
    [namespace, keys, visibleScopes],
  );
  return new Map(rows.map((r) => [r.parent, Number(r.n)]));
}

// ------------------------------------------------------------------ observations

/** Observations an entity rests on: those that mention it and those that wrote its attributes. */
const evidenceOf = (keyExpr: string) => `(
  SELECT m.observation_id FROM mentions m WHERE m.namespace = $1 AND m.entity_key = ${keyExpr}
  UNION
  SELECT v.observation_id FROM entity_versions v
  WHERE v.namespace = $1 AND v.key = ${keyExpr} AND v.observation_id IS NOT NULL)`;

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
): Promise<Map<string, Cursored<ObservationRow>[]>> {
  const order = query.backwards ? 'ASC' : 'DESC';
  const cmp = query.backwards ? '>' : '<';
  const { rows } = await q.query<Cursored<ObservationRow>>(
    `/* observationsOfEntities */
     SELECT k.key AS parent, x.*
     FROM unnest($2::text[]) AS k(key)
     CROSS JOIN LATERAL (
       SELECT ${OBSERVATION_COLUMNS}, ${micros('o.occurred_at')} AS "cursorTs" FROM observations o
       WHERE o.namespace = $1 AND o.observation_id IN ${evidenceOf('k.key')} AND ${visibleTo('o', '$3')}
         AND ($4::text IS NULL OR (o.occurred_at, o.observation_id) ${cmp} (${fromMicros('$4')}, $5::text))
       ORDER BY o.occurred_at ${order}, o.observation_id ${order} LIMIT $6
     ) x`,
    [namespace, keys, visibleScopes, query.cursor?.micros ?? null, query.cursor?.id ?? null, query.limit],
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
  const { rows } = await q.query<{ parent: string; n: number }>(
    `/* countObservationsOfEntities */
     SELECT k.key AS parent,
       (SELECT count(*) FROM observations o
        WHERE o.namespace = $1 AND o.observation_id IN ${evidenceOf('k.key')} AND ${visibleTo('o', '$3')})::int AS n
     FROM unnest($2::text[]) AS k(key)`,
    [namespace, keys, visibleScopes],
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
): Promise<Cursored<ObservationRow>[]> {
  const order = page.backwards ? 'ASC' : 'DESC';
  const cmp = page.backwards ? '>' : '<';
  const { rows } = await q.query<Cursored<ObservationRow>>(
    `/* listObservations */
     SELECT $1::text AS parent, ${OBSERVATION_COLUMNS}, ${micros('o.occurred_at')} AS "cursorTs"
     FROM observations o
     WHERE o.namespace = $1 AND ($2::text[] IS NULL OR o.kind = ANY($2::text[]))
       AND ($3::timestamptz IS NULL OR o.occurred_at >= $3::timestamptz)
       AND ($4::timestamptz IS NULL OR o.occurred_at < $4::timestamptz)
       AND ${visibleTo('o', '$5')}
       AND ($6::text IS NULL OR (o.occurred_at, o.observation_id) ${cmp} (${fromMicros('$6')}, $7::text))
     ORDER BY o.occurred_at ${order}, o.observation_id ${order}
     LIMIT $8`,
    [
      namespace,
      filter.kinds,
      filter.since,
      filter.until,
      visibleScopes,
      page.cursor?.micros ?? null,
      page.cursor?.id ?? null,
      page.limit,
    ],
  );
  return page.backwards ? rows.reverse() : rows;
}

export async function countObservations(
  q: Queryable,
  namespace: string,
  filter: ObservationFilter,
  visibleScopes: string[] | null,
): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `/* countObservations */
     SELECT count(*)::int AS n FROM observations o
     WHERE o.namespace = $1 AND ($2::text[] IS NULL OR o.kind = ANY($2::text[]))
       AND ($3::timestamptz IS NULL OR o.occurred_at >= $3::timestamptz)
       AND ($4::timestamptz IS NULL OR o.occurred_at < $4::timestamptz)
       AND ${visibleTo('o', '$5')}`,
    [namespace, filter.kinds, filter.since, filter.until, visibleScopes],
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
  const { rows } = await q.query<FactRow & { parent: string }>(
    `/* factsOfObservations */
     SELECT k.id AS parent, x.*
     FROM unnest($2::text[]) AS k(id)
     CROSS JOIN LATERAL (
       SELECT ${FACT_COLUMNS} FROM facts f
       WHERE f.namespace = $1 AND f.observation_ids @> ARRAY[k.id] AND f.status <> 'EVIDENCE_LOST'
         AND ${factVisibleTo('f', '$3')}
       ORDER BY f.valid_from, f.fact_id LIMIT $4
     ) x`,
    [namespace, observationIds, visibleScopes, limit],
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
  const { rows } = await q.query<{ parent: string; key: string }>(
    `/* episodeKeysOfObservations */
     SELECT k.id AS parent, x.key
     FROM unnest($2::text[]) AS k(id)
     CROSS JOIN LATERAL (
       SELECT e.key FROM mentions m
       JOIN entities e ON e.namespace = m.namespace AND e.key = m.entity_key
       WHERE m.namespace = $1 AND m.observation_id = k.id AND m.role = 'episode' AND ${visibleTo('e', '$3')}
       ORDER BY e.key LIMIT $4
     ) x`,
    [namespace, observationIds, visibleScopes, limit],
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
  const { rows } = await q.query<EntitySourceRow>(
    `/* entitySources */
     SELECT e.key, e.provenance, e.content IS NOT NULL AS "hasContent",
       ARRAY(SELECT o.observation_id FROM observations o
             WHERE o.namespace = $1 AND o.observation_id IN ${evidenceOf('e.key')} AND ${visibleTo('o', '$3')}
             ORDER BY o.occurred_at DESC, o.observation_id DESC LIMIT $4) AS "observationIds"
     FROM entities e
     WHERE e.namespace = $1 AND e.key = ANY($2::text[]) AND ${visibleTo('e', '$3')}`,
    [namespace, keys, visibleScopes, evidenceLimit],
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
  cursorTs: string;
}

export interface TimelineQuery {
  since: Date | null;
  until: Date | null;
  limit: number;
  cursor: { micros: string; rank: number; id: string } | null;
  backwards: boolean;
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
  const order = query.backwards ? 'DESC' : 'ASC';
  const cmp = query.backwards ? '<' : '>';
  const factWhere = `f.namespace = $1 AND (f.subject = $2 OR f.object = $2) AND ${factVisibleTo('f', '$5')}`;
  const { rows } = await q.query<TimelineRow>(
    `/* entityTimeline */
     SELECT ev.kind, ev.rank, ev.at, ev."itemId", ${micros('ev.at')} AS "cursorTs"
     FROM (
       SELECT 'FACT_CLOSED' AS kind, 0 AS rank, f.valid_to AS at, f.fact_id AS "itemId"
       FROM facts f WHERE ${factWhere} AND f.valid_to IS NOT NULL
       UNION ALL
       SELECT 'FACT_OPENED', 1, f.valid_from, f.fact_id FROM facts f WHERE ${factWhere}
       UNION ALL
       SELECT 'OBSERVATION', 2, o.occurred_at, o.observation_id FROM observations o
       WHERE o.namespace = $1 AND o.observation_id IN ${evidenceOf('$2')} AND ${visibleTo('o', '$5')}
     ) ev
     WHERE EXISTS (SELECT 1 FROM entities e WHERE e.namespace = $1 AND e.key = $2 AND ${visibleTo('e', '$5')})
       AND ($3::timestamptz IS NULL OR ev.at >= $3::timestamptz)
       AND ($4::timestamptz IS NULL OR ev.at < $4::timestamptz)
       AND ($6::text IS NULL OR (ev.at, ev.rank, ev."itemId") ${cmp} (${fromMicros('$6')}, $7::int, $8::text))
     ORDER BY ev.at ${order}, ev.rank ${order}, ev."itemId" ${order}
     LIMIT $9`,
    [
      namespace,
      key,
      query.since,
      query.until,
      visibleScopes,
      query.cursor?.micros ?? null,
      query.cursor?.rank ?? null,
      query.cursor?.id ?? null,
      query.limit,
    ],
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
