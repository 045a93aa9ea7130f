/**
 * The predicates every read and write statement carries, as `sql` fragments written once: the
 * namespace, visibility (a row, a fact with both its endpoints), relevance, and time (valid
 * at an instant, held by memory at an instant).
 *
 * Each takes its value either plain (bound as a new parameter) or as a `param(…)` the
 * statement binds once and uses in several predicates, as a statement that filters several
 * tables by the same scopes does.
 */
import { Param, SqlFragment, ident, join, raw, sql } from './sql.js';

/** The principal's visibility scopes; null = an unrestricted principal. */
export type Scopes = readonly string[] | null;

/** A value as one parameter; a Param as it is; a fragment (a constant such as NULL) spliced in. */
const bound = <T>(value: T | Param | SqlFragment): Param | SqlFragment =>
  value instanceof Param || value instanceof SqlFragment ? value : new Param(value);

/** `alias.column`, or the bare column when the statement has one table and no alias. */
const column = (alias: string, name: string): SqlFragment => ident(alias ? `${alias}.${name}` : name);

/** `alias.namespace` is `namespace`. */
export function inNamespace(alias: string, namespace: string | Param): SqlFragment {
  return sql`${column(alias, 'namespace')} = ${bound(namespace)}`;
}

/** `alias.namespace` is one of `namespaces`. */
export function inNamespaces(alias: string, namespaces: readonly string[] | Param): SqlFragment {
  return sql`${column(alias, 'namespace')} = ANY(${bound(namespaces)}::text[])`;
}

/**
 * The visibility predicate: a row with no visibility scopes is visible to everyone who may
 * read its namespace, any other to a principal holding one of them.
 */
export function visible(alias: string, scopes: Scopes | Param | SqlFragment): SqlFragment {
  const s = bound(scopes);
  const col = column(alias, 'visibility');
  return sql`(${s}::text[] IS NULL OR cardinality(${col}) = 0 OR ${col} && ${s}::text[])`;
}

/** A fact endpoint the statement already holds under the visibility predicate. */
export type Endpoint = 'subject' | 'object';

/**
 * A fact is visible only when it is and both its endpoints exist and are visible: a hidden
 * node hides every edge that touches it, on every read and write path alike. `checked` names
 * endpoints the statement already read under this predicate (the row it reads facts of…).
 */
export function factVisible(
  alias: string,
  scopes: Scopes | Param,
  checked: readonly Endpoint[] = [],
): SqlFragment {
  const s = bound(scopes);
  // A scalar subquery stays a primary-key probe per fact; an EXISTS may be planned as a
  // semi-join that hashes every entity of the namespace. No row (absent endpoint): not visible.
  const endpoint = (side: Endpoint) =>
    sql`coalesce((SELECT ${visible('fe', s)} FROM entities fe
               WHERE fe.namespace = ${column(alias, 'namespace')} AND fe.key = ${column(alias, side)}), false)`;
  const ends = (['subject', 'object'] as const).filter((side) => !checked.includes(side)).map(endpoint);
  return sql`(${join([visible(alias, s), ...ends], ' AND ')})`;
}

/**
 * Relevance scopes: an item is relevant when its relevance scopes (scopes that are not
 * visibility scopes) intersect `scopes`, or when it has none. `scopes` null disables the filter.
 */
export function relevant(alias: string, scopes: Scopes | Param): SqlFragment {
  const p = bound(scopes);
  const a = ident(alias);
  return sql`(${p}::text[] IS NULL OR ${a}.scopes && ${p}::text[]
    OR NOT EXISTS (SELECT 1 FROM unnest(${a}.scopes) AS rs(s) WHERE NOT (rs.s = ANY(${a}.visibility))))`;
}

/** Statuses a fact read may meet: served ones, and EVIDENCE_LOST (reported, never served). */
export const READABLE_FACT_STATUSES = ['ACTIVE', 'SUPERSEDED', 'EVIDENCE_LOST'] as const;

/**
 * The status sets `validAt` filters by, as constant SQL: constants let the planner estimate
 * them, generic plans included (a bound list would be a guess).
 */
const STATUS_SETS = {
  readable: raw(`IN (${READABLE_FACT_STATUSES.map((s) => `'${s}'`).join(', ')})`),
  /** What reads serve: current and superseded facts (EVIDENCE_LOST is never served). */
  served: raw(`IN ('ACTIVE', 'SUPERSEDED')`),
  active: raw(`IN ('ACTIVE')`),
} as const;

/**
 * The fact was valid at `asOf` (`valid_from ≤ asOf < valid_to`) with a status of `statuses`
 * (READABLE_FACT_STATUSES, served ones, or ACTIVE only); a superseded fact's closed `valid_to` records
 * exactly when it was in force.
 */
export function validAt(
  alias: string,
  asOf: Date | Param,
  statuses: keyof typeof STATUS_SETS = 'readable',
): SqlFragment {
  const at = bound(asOf);
  const a = ident(alias);
  return sql`${a}.status ${STATUS_SETS[statuses]}
  AND ${a}.valid_from <= ${at}::timestamptz AND (${a}.valid_to IS NULL OR ${a}.valid_to > ${at}::timestamptz)`;
}

/**
 * A chunk as memory held it at `asOf` (NULL = now, no bound): an observation's text by the
 * observation's occurredAt, any other chunk (a document section) by when it was written.
 */
export function chunkHeld(alias: string, asOf: Date | null | Param): SqlFragment {
  const at = bound(asOf);
  return sql`(${at}::timestamptz IS NULL OR coalesce(${column(alias, 'occurred_at')}, ${column(alias, 'created_at')}) <= ${at}::timestamptz)`;
}

/**
 * A fact as memory held it at `asOf` (NULL = now, no bound), beside being valid then: one
 * drawn from observations needs one of them to have occurred by then (the rule observations
 * themselves follow), so a later message never leaks into an earlier instant through its facts.
 * A fact with no observation (asserted directly, a document link) has no other time than its
 * validFrom, which validity already bounds.
 */
export function factHeld(alias: string, asOf: Date | null | Param): SqlFragment {
  const at = bound(asOf);
  const ids = column(alias, 'observation_ids');
  return sql`(${at}::timestamptz IS NULL OR cardinality(${ids}) = 0
    OR EXISTS (SELECT 1 FROM observations ho WHERE ho.namespace = ${column(alias, 'namespace')}
               AND ho.observation_id = ANY(${ids}) AND ho.occurred_at <= ${at}::timestamptz))`;
}
