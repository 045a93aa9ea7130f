import type { Queryable } from '../../db/database.js';
import { ENTITY_COLUMN_SQL, type EntityColumn, type EntityRow } from './entity-store.js';
import type { FactRow } from './fact-store.js';
import {
  type Cursored,
  type EntityFactsQuery,
  entityFactsParams,
  entityFactsWhere,
  factCursorMicros,
} from './graph-store.js';
import {
  empty,
  ident,
  join as joinFragments,
  type Param,
  param,
  raw,
  run,
  type SqlFragment,
  sql,
} from './sql.js';
import { visible } from './visibility.js';

/**
 * Nested graph reads compiled into one statement: an entity (or a list of keys), its facts
 * page, each fact's endpoints, their facts… as nested correlated subqueries that each build
 * JSON (`json_build_object` / `json_agg`). Each level filters exactly as the batched loader
 * statements do (`entityFactsWhere`: namespace, time, predicates, cursor, and the fact
 * visible with both endpoints) and each entity carries `visible`; only the columns the
 * caller selected are built.
 */

/** Fact columns a nested read may select (namespace, ids and endpoints always come). */
const FACT_COLUMN_SQL = {
  predicate: 'predicate',
  validFrom: 'valid_from',
  validTo: 'valid_to',
  recordedAt: 'recorded_at',
  evidence: 'evidence',
  confidence: 'confidence',
  status: 'status',
  conflict: 'conflict',
  conflictsWith: 'conflicts_with',
  supersedes: 'supersedes',
  supersededBy: 'superseded_by',
  observationIds: 'observation_ids',
  sourcePath: 'source_path',
  scopes: 'scopes',
  visibility: 'visibility',
  attributes: 'attributes',
  statusReason: 'status_reason',
} as const satisfies Partial<Record<keyof FactRow, string>>;

export type { EntityColumn };
export type FactColumn = keyof typeof FACT_COLUMN_SQL;
export const ENTITY_COLUMNS_ALL = Object.keys(ENTITY_COLUMN_SQL) as EntityColumn[];
export const FACT_COLUMNS_ALL = Object.keys(FACT_COLUMN_SQL) as FactColumn[];

/** What to read of an entity: its columns and, optionally, one page of its facts. */
export interface EntityTreeShape {
  columns: readonly EntityColumn[];
  facts: FactTreeShape | null;
}

export interface FactTreeShape {
  query: EntityFactsQuery;
  /**
   * How many facts to fetch per entity: `query.limit`, or one fewer when the caller reads no
   * page flag (the extra row only tells whether another page follows).
   */
  rows: number;
  columns: readonly FactColumn[];
  subject: EntityTreeShape | null;
  object: EntityTreeShape | null;
}

/** An entity as read, with its facts page when the shape asked for one. */
export interface EntityTree {
  row: EntityRow;
  facts: FactTree[] | null;
}

/** A fact as read; `subject`/`object` are present when asked for (null: not visible). */
export interface FactTree {
  row: Cursored<FactRow>;
  subject?: EntityTree | null;
  object?: EntityTree | null;
}

interface Compile {
  namespace: Param;
  scopes: Param;
  aliases: number;
}

/** An entity's JSON from its columns, `col(name)` naming each column as the query holds it. */
function entityJson(col: (name: string) => string, shape: EntityTreeShape, c: Compile): SqlFragment {
  const pairs = [
    raw(`'key', ${col('key')}`),
    raw(`'pii', ${col('pii')}`),
    raw(`'piiCategories', ${col('pii_categories')}`),
    ...shape.columns.map((name) => raw(`'${name}', ${col(ENTITY_COLUMN_SQL[name])}`)),
  ];
  if (shape.facts) pairs.push(sql`'facts', ${factsJson(col('key'), shape.facts, c)}`);
  return sql`json_build_object(${joinFragments(pairs, ', ')})`;
}

const columnOf = (alias: string) => (name: string) => `${alias}.${name}`;

function endpointJson(factAlias: string, side: 'subject' | 'object', shape: EntityTreeShape, c: Compile) {
  const e = `e${++c.aliases}`;
  return sql`(SELECT ${entityJson(columnOf(e), shape, c)} FROM entities ${ident(e)}
    WHERE ${ident(`${e}.namespace`)} = ${c.namespace} AND ${ident(`${e}.key`)} = ${ident(`${factAlias}.${side}`)} AND ${visible(e, c.scopes)})`;
}

/** Columns of the joined other endpoint carry this prefix through the page subquery. */
const OTHER = 'o_';

/** The other endpoint's columns a shape reads, as the branch selects them from `o`. */
function otherColumns(shape: EntityTreeShape): string[] {
  const names = ['key', 'pii', 'pii_categories', ...shape.columns.map((name) => ENTITY_COLUMN_SQL[name])];
  return [...new Set(names)].map((name) => `o.${name} AS ${OTHER}${name}`);
}

/**
 * One page of the parent's facts, newest first, as a JSON array. A one-sided page whose other
 * endpoint is selected joins that endpoint once, under the visibility predicate, and builds it
 * from the joined columns: one entity probe per fact instead of a check and then a read.
 */
function factsJson(parentKey: string, shape: FactTreeShape, c: Compile): SqlFragment {
  const q = shape.query;
  const u = `u${++c.aliases}`;
  const order = raw(q.backwards ? 'ASC' : 'DESC');
  const limit = param(shape.rows);
  const sides = (
    q.direction === 'OUT' ? ['subject'] : q.direction === 'IN' ? ['object'] : ['subject', 'object']
  ) as ('subject' | 'object')[];
  const other = sides.length === 1 ? (sides[0] === 'subject' ? 'object' : 'subject') : null;
  const joined = other ? shape[other] : null;
  const params = {
    ...entityFactsParams(c.namespace, q, c.scopes),
    parentKey,
    // The parent entity was read under the visibility predicate just above.
    parentVisible: true,
    otherVisible: joined !== null,
  };
  const columns = [
    'namespace',
    'fact_id',
    'subject',
    'object',
    'valid_from',
    ...shape.columns.map((col) => FACT_COLUMN_SQL[col]),
  ];
  const select = raw(
    [...[...new Set(columns)].map((col) => `f.${col}`), ...(joined ? otherColumns(joined) : [])].join(', '),
  );
  const join = joined
    ? sql`JOIN entities o ON o.namespace = f.namespace AND o.key = ${ident(`f.${other}`)} AND ${visible('o', c.scopes)}`
    : empty;
  const branches = sides.map(
    (side) => sql`(SELECT ${select} FROM facts f ${join} WHERE ${entityFactsWhere(side, q, params)}
      ORDER BY f.valid_from ${order}, f.fact_id ${order} LIMIT ${limit})`,
  );
  const pairs = [
    raw(`'factId', ${u}.fact_id`),
    raw(`'subject', ${u}.subject`),
    raw(`'object', ${u}.object`),
    sql`'cursorTs', ${factCursorMicros(u)}`,
    ...shape.columns.map((col) => raw(`'${col}', ${u}.${FACT_COLUMN_SQL[col]}`)),
  ];
  for (const side of ['subject', 'object'] as const) {
    const end = shape[side];
    if (!end) continue;
    const json =
      side === other ? entityJson((name) => `${u}.${OTHER}${name}`, end, c) : endpointJson(u, side, end, c);
    pairs.push(sql`${raw(`'${side}Entity'`)}, ${json}`);
  }
  // One branch is already one ordered, limited page; only two need merging.
  const page =
    branches.length === 1
      ? branches[0]!
      : sql`(SELECT * FROM (${joinFragments(branches, ' UNION ALL ')}) b
          ORDER BY b.valid_from ${order}, b.fact_id ${order} LIMIT ${limit})`;
  return sql`(SELECT coalesce(json_agg(json_build_object(${joinFragments(pairs, ', ')})
      ORDER BY ${ident(`${u}.valid_from`)} DESC, ${ident(`${u}.fact_id`)} DESC), '[]'::json)
    FROM ${page} ${ident(u)})`;
}

/**
 * The statement of a shape with its values. Its text depends on the shape only (the columns,
 * directions and depth the caller selected), so each shape is one prepared statement; keys,
 * cursors and limits are bound.
 */
export function compileEntityTrees(
  namespace: string,
  keys: readonly string[],
  shape: EntityTreeShape,
  scopes: string[] | null,
): SqlFragment {
  const c: Compile = { namespace: param(namespace), scopes: param(scopes), aliases: 0 };
  return sql`/* nestedEntityRead */
     SELECT ${entityJson(columnOf('e0'), shape, c)} AS tree FROM entities e0
     WHERE e0.namespace = ${c.namespace} AND e0.key = ANY(${keys}::text[]) AND ${visible('e0', c.scopes)}`;
}

/** The entities with these keys (visible ones only, in no particular order), read to `shape`. */
export async function readEntityTrees(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  shape: EntityTreeShape,
  visibleScopes: string[] | null,
): Promise<EntityTree[]> {
  const { rows } = await run<{ tree: EntityJson }>(
    q,
    compileEntityTrees(namespace, keys, shape, visibleScopes),
  );
  return rows.map((r) => entityTree(namespace, r.tree));
}

// ------------------------------------------------------------------ JSON → row models

type EntityJson = Record<string, unknown> & { key: string; facts?: FactJson[] };
type FactJson = Record<string, unknown> & {
  factId: string;
  subject: string;
  object: string;
  cursorTs: string;
  subjectEntity?: EntityJson | null;
  objectEntity?: EntityJson | null;
};

const date = (v: unknown): Date | null => (typeof v === 'string' ? new Date(v) : null);

/**
 * The neutral time of an unselected timestamp column, one instance for every row: nothing
 * reads it (no field selected it), and a walk would otherwise allocate four dates per fact
 * and entity it never serves.
 */
const UNSELECTED_TIME = new Date(0);

/**
 * A row from its JSON. Columns the shape did not select keep neutral values: only the fields
 * the caller selected are resolved from them (the shape is built from that selection).
 */
function entityTree(namespace: string, j: EntityJson): EntityTree {
  const row: EntityRow = {
    namespace,
    key: j.key,
    kind: (j.kind as string) ?? '',
    title: (j.title as string) ?? '',
    attributes: (j.attributes as Record<string, unknown>) ?? {},
    scopes: (j.scopes as string[]) ?? [],
    visibility: (j.visibility as string[]) ?? [],
    sourcePath: (j.sourcePath as string | null) ?? null,
    confidence: (j.confidence as number | null) ?? null,
    origin: (j.origin as EntityRow['origin']) ?? 'AGENT',
    placeholder: (j.placeholder as boolean) ?? false,
    stale: (j.stale as boolean) ?? false,
    aliases: (j.aliases as string[]) ?? [],
    pii: j.pii === true,
    piiCategories: (j.piiCategories as string[]) ?? [],
    lastSeen: date(j.lastSeen),
    createdAt: date(j.createdAt) ?? UNSELECTED_TIME,
    updatedAt: date(j.updatedAt) ?? UNSELECTED_TIME,
  };
  return { row, facts: j.facts ? j.facts.map((f) => factTree(namespace, f)) : null };
}

function factTree(namespace: string, j: FactJson): FactTree {
  const row: Cursored<FactRow> = {
    namespace,
    factId: j.factId,
    subject: j.subject,
    predicate: (j.predicate as string) ?? '',
    object: j.object,
    validFrom: date(j.validFrom) ?? UNSELECTED_TIME,
    validTo: date(j.validTo),
    recordedAt: date(j.recordedAt) ?? UNSELECTED_TIME,
    evidence: (j.evidence as FactRow['evidence']) ?? 'ASSERTED',
    confidence: (j.confidence as number) ?? 0,
    status: (j.status as FactRow['status']) ?? 'ACTIVE',
    conflict: (j.conflict as boolean) ?? false,
    conflictsWith: (j.conflictsWith as string[]) ?? [],
    supersedes: (j.supersedes as string | null) ?? null,
    supersededBy: (j.supersededBy as string | null) ?? null,
    observationIds: (j.observationIds as string[]) ?? [],
    sourcePath: (j.sourcePath as string | null) ?? null,
    scopes: (j.scopes as string[]) ?? [],
    visibility: (j.visibility as string[]) ?? [],
    attributes: (j.attributes as Record<string, unknown>) ?? {},
    statusReason: (j.statusReason as string | null) ?? null,
    parent: '',
    cursorTs: j.cursorTs,
  };
  const tree: FactTree = { row };
  if ('subjectEntity' in j) tree.subject = j.subjectEntity ? entityTree(namespace, j.subjectEntity) : null;
  if ('objectEntity' in j) tree.object = j.objectEntity ? entityTree(namespace, j.objectEntity) : null;
  return tree;
}
