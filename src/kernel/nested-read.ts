import type { PageArgs } from './pagination.js';
import type { EntityRow } from './store/entity-store.js';
import {
  ENTITY_COLUMNS_ALL,
  type EntityColumn,
  type EntityTreeShape,
  FACT_COLUMNS_ALL,
  type FactColumn,
  type FactTreeShape,
  readEntityTrees,
} from './store/nested-read-store.js';
import { type EntityFactsArgs, entityFactsQuery } from './entity-facts.js';
import { attachTree } from './prefetched.js';
import type { RequestScope } from './request-scope.js';

/**
 * What a client selected of an entity, as plain data (the schema layer reads it from the
 * GraphQL selection set): field names, and the one `facts` page with its own selection.
 */
export interface EntitySelection {
  fields: ReadonlySet<string>;
  facts: FactsSelection | null;
}

export interface FactsSelection {
  args: EntityFactsArgs;
  page: PageArgs;
  fields: ReadonlySet<string>;
  /** The connection's fields beside `edges` (`pageInfo`, `totalCount`…). */
  connectionFields: ReadonlySet<string>;
  subject: EntitySelection | null;
  object: EntitySelection | null;
}

/** Connection fields that need no look-ahead row: only `pageInfo` reads whether more follow. */
const NO_LOOKAHEAD = new Set(['__typename', 'edges', 'totalCount']);

/** Entity fields that need no column beyond namespace and key (relations load by key). */
const ENTITY_KEY_ONLY = new Set([
  '__typename',
  'id',
  'namespace',
  'key',
  'facts',
  'neighbors',
  'chunks',
  'observations',
]);
const ENTITY_FIELD_COLUMNS: Readonly<Record<string, readonly EntityColumn[]>> = {
  kind: ['kind'],
  title: ['title'],
  attributes: ['attributes'],
  scopes: ['scopes'],
  sourcePath: ['sourcePath'],
  confidence: ['confidence'],
  origin: ['origin'],
  placeholder: ['placeholder'],
  stale: ['stale'],
  lastSeen: ['lastSeen'],
};

const FACT_KEY_ONLY = new Set(['__typename', 'id', 'factId', 'namespace', 'subject', 'object']);
const FACT_FIELD_COLUMNS: Readonly<Record<string, readonly FactColumn[]>> = {
  predicate: ['predicate'],
  validFrom: ['validFrom'],
  validTo: ['validTo'],
  recordedAt: ['recordedAt'],
  evidence: ['evidence'],
  confidence: ['confidence'],
  status: ['status'],
  conflict: ['conflict'],
  conflictsWith: ['conflictsWith'],
  supersedes: ['supersedes'],
  supersededBy: ['supersededBy'],
  observations: ['observationIds'],
  sourcePath: ['sourcePath'],
  scopes: ['scopes'],
  attributes: ['attributes'],
  statusReason: ['statusReason'],
};

/**
 * The columns a set of selected fields reads; a field this table does not know (one added
 * later, say) reads the whole row, so a new field is never served a neutral value.
 */
function columnsFor<C extends string>(
  fields: ReadonlySet<string>,
  keyOnly: ReadonlySet<string>,
  known: Readonly<Record<string, readonly C[]>>,
  all: readonly C[],
): C[] {
  const out = new Set<C>();
  for (const field of fields) {
    if (keyOnly.has(field)) continue;
    const cols = known[field];
    if (!cols) return [...all];
    for (const c of cols) out.add(c);
  }
  return [...out];
}

/** The entity columns these selected fields read (every column for a field not listed here). */
export function entityColumns(fields: ReadonlySet<string>): EntityColumn[] {
  return columnsFor(fields, ENTITY_KEY_ONLY, ENTITY_FIELD_COLUMNS, ENTITY_COLUMNS_ALL);
}

export function entityShape(selection: EntitySelection): EntityTreeShape {
  return {
    columns: entityColumns(selection.fields),
    facts: selection.facts ? factsShape(selection.facts) : null,
  };
}

/** Null when the arguments are invalid: the resolver then reports the error at its own path. */
function factsShape(selection: FactsSelection): FactTreeShape | null {
  let query: FactTreeShape['query'];
  try {
    query = entityFactsQuery(selection.args, selection.page).query;
  } catch {
    return null;
  }
  const lookahead = [...selection.connectionFields].some((f) => !NO_LOOKAHEAD.has(f));
  return {
    query,
    rows: lookahead ? query.limit : query.limit - 1,
    columns: columnsFor(selection.fields, FACT_KEY_ONLY, FACT_FIELD_COLUMNS, FACT_COLUMNS_ALL),
    subject: selection.subject ? entityShape(selection.subject) : null,
    object: selection.object ? entityShape(selection.object) : null,
  };
}

/**
 * One entity and the relations selected under it in one statement (entity → facts → endpoint
 * → facts …); relations it did not cover resolve through the loaders as usual.
 */
export async function readEntityWithSelection(
  scope: RequestScope,
  namespace: string,
  key: string,
  selection: EntitySelection,
): Promise<EntityRow | null> {
  const shape = entityShape(selection);
  const [tree] = await readEntityTrees(scope.db, namespace, [key], shape, scope.principal.scopes);
  return tree ? attachTree(tree, shape) : null;
}
