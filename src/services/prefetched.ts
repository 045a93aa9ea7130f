import type { EntityRow } from '../store/entity-store.js';
import type { FactRow } from '../store/fact-store.js';
import type { Cursored, EntityFactsQuery } from '../store/graph-store.js';
import type { EntityTree, EntityTreeShape, FactTree, FactTreeShape } from '../store/nested-read-store.js';

/**
 * Relations a nested read fetched together with their parent, attached to the parent row
 * object itself (weakly: they live exactly as long as the request's rows). The relation
 * resolvers look here first and fall back to the per-request loaders, so a shape the compiler
 * did not cover still costs one statement per level. Rows read this way are never primed into
 * the loaders: they hold only the selected columns.
 */
const factPages = new WeakMap<EntityRow, { query: EntityFactsQuery; rows: Cursored<FactRow>[] }>();
const endpoints = new WeakMap<FactRow, { subject?: EntityRow | null; object?: EntityRow | null }>();

/** Registers the relations of a tree read to `shape` and returns its root row. */
export function attachTree(tree: EntityTree, shape: EntityTreeShape): EntityRow {
  const facts = shape.facts;
  if (!tree.facts || !facts) return tree.row;
  factPages.set(tree.row, { query: facts.query, rows: tree.facts.map((f) => f.row) });
  for (const fact of tree.facts) attachFact(fact, facts);
  return tree.row;
}

function attachFact(fact: FactTree, shape: FactTreeShape): void {
  const ends: { subject?: EntityRow | null; object?: EntityRow | null } = {};
  for (const side of ['subject', 'object'] as const) {
    const end = fact[side];
    const endShape = shape[side];
    if (end === undefined || !endShape) continue;
    ends[side] = end ? attachTree(end, endShape) : null;
  }
  endpoints.set(fact.row, ends);
}

/** The facts page fetched with this entity for exactly these arguments, if any. */
export function prefetchedFacts(entity: EntityRow, query: EntityFactsQuery): Cursored<FactRow>[] | null {
  const page = factPages.get(entity);
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
  return endpoints.get(fact)?.[side];
}
