import type { EntityRow } from './store/entity-store.js';
import type { FactRow } from './store/fact-store.js';
import type { Cursored, EntityFactsQuery } from './store/graph-store.js';
import type { EntityTree, EntityTreeShape, FactTree, FactTreeShape } from './store/nested-read-store.js';

/**
 * Relations a nested read fetched together with their parent, attached to the parent row
 * object itself under a symbol (JSON and Object.keys do not see it; the relations live exactly
 * as long as the request's rows). A property costs less than a WeakMap entry, which a walk
 * would add per fact and entity and the collector then traces as ephemerons. The relation
 * resolvers look here first and fall back to the per-request loaders, so a shape the compiler
 * did not cover still costs one statement per level. Rows read this way are never primed into
 * the loaders: they hold only the selected columns.
 */
const FACT_PAGE = Symbol('prefetched facts page');
const ENDPOINTS = Symbol('prefetched endpoints');

type FactPage = { query: EntityFactsQuery; rows: Cursored<FactRow>[] };
type Endpoints = { subject?: EntityRow | null; object?: EntityRow | null };
type WithFactPage = EntityRow & { [FACT_PAGE]?: FactPage };
type WithEndpoints = FactRow & { [ENDPOINTS]?: Endpoints };

/** Registers the relations of a tree read to `shape` and returns its root row. */
export function attachTree(tree: EntityTree, shape: EntityTreeShape): EntityRow {
  const facts = shape.facts;
  if (!tree.facts || !facts) return tree.row;
  (tree.row as WithFactPage)[FACT_PAGE] = { query: facts.query, rows: tree.facts.map((f) => f.row) };
  for (const fact of tree.facts) attachFact(fact, facts);
  return tree.row;
}

function attachFact(fact: FactTree, shape: FactTreeShape): void {
  if (!shape.subject && !shape.object) return;
  const ends: Endpoints = {};
  if (shape.subject && fact.subject !== undefined)
    ends.subject = fact.subject ? attachTree(fact.subject, shape.subject) : null;
  if (shape.object && fact.object !== undefined)
    ends.object = fact.object ? attachTree(fact.object, shape.object) : null;
  (fact.row as WithEndpoints)[ENDPOINTS] = ends;
}

/** The facts page fetched with this entity for exactly these arguments, if any. */
export function prefetchedFacts(entity: EntityRow, query: EntityFactsQuery): Cursored<FactRow>[] | null {
  const page = (entity as WithFactPage)[FACT_PAGE];
  return page && sameFactsQuery(page.query, query) ? page.rows : null;
}

/**
 * Field by field, as the loaders' stable JSON key would compare them (dates by instant): a
 * walk asks this once per entity, so it is compared without serialising either side.
 */
export function sameFactsQuery(a: EntityFactsQuery, b: EntityFactsQuery): boolean {
  return (
    a.direction === b.direction &&
    a.includeHistory === b.includeHistory &&
    a.limit === b.limit &&
    a.backwards === b.backwards &&
    (a.asOf === b.asOf || (a.asOf !== null && b.asOf !== null && a.asOf.getTime() === b.asOf.getTime())) &&
    sameList(a.predicates, b.predicates) &&
    (a.cursor === b.cursor ||
      (a.cursor !== null &&
        b.cursor !== null &&
        a.cursor.micros === b.cursor.micros &&
        a.cursor.id === b.cursor.id))
  );
}

function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.length !== b.length) return false;
  return a.every((v, i) => v === b[i]);
}

/** The endpoint fetched with this fact: a row, null (not visible), or undefined (not fetched). */
export function prefetchedEndpoint(fact: FactRow, side: 'subject' | 'object'): EntityRow | null | undefined {
  return (fact as WithEndpoints)[ENDPOINTS]?.[side];
}
