/**
 * The read shapes of the peer benchmark, each as memgate and as PostGraphile 5 ask for it.
 * Facts are followed outwards (subject → object) on both sides, since that is the relation
 * PostGraphile exposes from a foreign key; the floor replays the SQL memgate ran for the shape.
 */
import type { Dataset } from '../generate.js';

export type ShapeName = 'entity' | 'page' | 'facts' | 'walk';

export interface Shape {
  name: ShapeName;
  title: string;
  memgate: string;
  postgraphile: string;
  /** Variables of request `i`; `after` is the page cursor of that system (page shape only). */
  variables(ds: Dataset, i: number, after: string | null): Record<string, unknown>;
}

const byKey = (ds: Dataset, i: number) => ({ ns: ds.namespace, key: ds.anchorKey(i % 256) });

const memgateFacts = (first: number, inner: string) =>
  `facts(first: ${first}, direction: OUT) { edges { node { predicate object { key title ${inner} } } } }`;
const pgFacts = (first: number, inner: string) =>
  `factsBySubject(first: ${first}, condition: { status: "ACTIVE", validTo: null }) { nodes { predicate objectEntity { key title ${inner} } } }`;

export const SHAPES: readonly Shape[] = [
  {
    name: 'entity',
    title: 'entity by key',
    memgate: 'query E($ns: String!, $key: String!) { entity(namespace: $ns, key: $key) { key kind title } }',
    postgraphile:
      'query E($ns: String!, $key: String!) { entityByNamespaceAndKey(namespace: $ns, key: $key) { key kind title } }',
    variables: byKey,
  },
  {
    name: 'page',
    title: 'page of 20 with cursor',
    memgate: `query P($ns: String!, $after: String) {
  entities(namespace: $ns, first: 20, after: $after) { edges { cursor node { key kind title } } pageInfo { hasNextPage endCursor } }
}`,
    postgraphile: `query P($ns: String!, $after: Cursor) {
  allEntities(condition: { namespace: $ns }, first: 20, after: $after, orderBy: PRIMARY_KEY_ASC) {
    edges { cursor node { key kind title } } pageInfo { hasNextPage endCursor }
  }
}`,
    variables: (ds, _i, after) => ({ ns: ds.namespace, after }),
  },
  {
    name: 'facts',
    title: "entity + 20 facts + each fact's other endpoint",
    memgate: `query F($ns: String!, $key: String!) { entity(namespace: $ns, key: $key) { key title ${memgateFacts(20, '')} } }`,
    postgraphile: `query F($ns: String!, $key: String!) { entityByNamespaceAndKey(namespace: $ns, key: $key) { key title ${pgFacts(20, '')} } }`,
    variables: byKey,
  },
  {
    name: 'walk',
    title: '3-level walk (10 × 10 × 5)',
    memgate: `query W($ns: String!, $key: String!) { entity(namespace: $ns, key: $key) { key title ${memgateFacts(
      10,
      memgateFacts(10, memgateFacts(5, '')),
    )} } }`,
    postgraphile: `query W($ns: String!, $key: String!) { entityByNamespaceAndKey(namespace: $ns, key: $key) { key title ${pgFacts(
      10,
      pgFacts(10, pgFacts(5, '')),
    )} } }`,
    variables: byKey,
  },
];

/** Hybrid search as the main benchmark's search scenario asks it, minus the graph hop. */
export const SEARCH_DOCUMENT = `query S($input: SearchInput!) {
  search(input: $input) { hits { score chunk { id title text } } }
}`;

export const searchVariables = (ds: Dataset, i: number) => ({
  input: { namespaces: [ds.namespace], query: ds.searchQuery(i % 256), k: 8, mode: 'HYBRID' },
});
