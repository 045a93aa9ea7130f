/**
 * The `sql` tagged template: statements written with their values inline, numbered `$1…$n`
 * when run, so that fragments compose (a predicate written once, used by every statement that
 * needs it) and no statement carries a hand-numbered placeholder.
 *
 *   sql`SELECT … FROM facts f WHERE ${inNamespaces('f', namespaces)} AND ${visible('f', scopes)}`
 *
 * An interpolated value becomes one parameter; an interpolated fragment is spliced in; a
 * `param(value)` used several times is bound once. Only the stores use it: SQL lives there.
 */
import type { Queryable, QueryResult } from '../../db/database.js';
import { chunkHeldAt, factHeldAt, factVisibleTo, visibleTo } from './visibility.js';

/** A value bound once however often it is interpolated. */
export class Param {
  constructor(readonly value: unknown) {}
}

type Part = string | Param;

export class SqlFragment {
  constructor(readonly parts: readonly Part[]) {}
}

export function param(value: unknown): Param {
  return new Param(value);
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): SqlFragment {
  const parts: Part[] = [];
  strings.forEach((s, i) => {
    parts.push(s);
    if (i >= values.length) return;
    const v = values[i];
    if (v instanceof SqlFragment) parts.push(...v.parts);
    else parts.push(v instanceof Param ? v : new Param(v));
  });
  return new SqlFragment(parts);
}

/** Trusted SQL text (identifiers and constants chosen by code, never by input). */
export function raw(text: string): SqlFragment {
  return new SqlFragment([text]);
}

export function join(fragments: readonly SqlFragment[], separator: string): SqlFragment {
  const parts: Part[] = [];
  fragments.forEach((f, i) => {
    if (i > 0) parts.push(separator);
    parts.push(...f.parts);
  });
  return new SqlFragment(parts);
}

/** The text with `$n` placeholders and the values in their order. */
export function compileSql(fragment: SqlFragment): { text: string; values: unknown[] } {
  const numbers = new Map<Param, number>();
  const values: unknown[] = [];
  let text = '';
  for (const part of fragment.parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    let n = numbers.get(part);
    if (n === undefined) {
      values.push(part.value);
      n = values.length;
      numbers.set(part, n);
    }
    text += `$${n}`;
  }
  return { text, values };
}

export function run<R>(q: Queryable, fragment: SqlFragment): Promise<QueryResult<R>> {
  const { text, values } = compileSql(fragment);
  return q.query<R>(text, values);
}

/**
 * A fragment from a text builder that takes a placeholder (the older string predicates): the
 * value is bound once, wherever the builder placed it.
 */
function withPlaceholder(value: unknown, build: (placeholder: string) => string): SqlFragment {
  const marker = '\u0000param\u0000';
  const p = new Param(value);
  const pieces = build(marker).split(marker);
  const parts: Part[] = [];
  pieces.forEach((piece, i) => {
    if (i > 0) parts.push(p);
    parts.push(piece);
  });
  return new SqlFragment(parts);
}

// ------------------------------------------------------------------ shared fragments

/** `alias.namespace` is one of `namespaces`. */
export function inNamespaces(alias: string, namespaces: readonly string[]): SqlFragment {
  return sql`${raw(alias)}.namespace = ANY(${namespaces}::text[])`;
}

/** The visibility predicate (see visibility.ts); `scopes` null = an unrestricted principal. */
export function visible(alias: string, scopes: readonly string[] | null): SqlFragment {
  return withPlaceholder(scopes, (p) => visibleTo(alias, p));
}

/** A fact is visible only with both its endpoints (see visibility.ts, factVisibleTo). */
export function factVisible(alias: string, scopes: readonly string[] | null): SqlFragment {
  return withPlaceholder(scopes, (p) => factVisibleTo(alias, p));
}

/**
 * Relevance scopes: an item is relevant when its relevance scopes (scopes that are not
 * visibility scopes) intersect `scopes`, or when it has none. `scopes` null disables the filter.
 */
export function relevant(alias: string, scopes: readonly string[] | null): SqlFragment {
  const p = param(scopes);
  const a = raw(alias);
  return sql`(${p}::text[] IS NULL OR ${a}.scopes && ${p}::text[]
    OR NOT EXISTS (SELECT 1 FROM unnest(${a}.scopes) AS rs(s) WHERE NOT (rs.s = ANY(${a}.visibility))))`;
}

/** Statuses a fact read may meet: served ones, and EVIDENCE_LOST (reported, never served). */
export const READABLE_FACT_STATUSES = ['ACTIVE', 'SUPERSEDED', 'EVIDENCE_LOST'] as const;

/**
 * The fact was valid at `asOf` (`valid_from ≤ asOf < valid_to`) with one of `statuses`; a
 * superseded fact's closed `valid_to` records exactly when it was in force.
 */
export function validAt(
  alias: string,
  asOf: Date,
  statuses: readonly string[] = READABLE_FACT_STATUSES,
): SqlFragment {
  const at = param(asOf);
  const a = raw(alias);
  const list = raw(statuses.map((s) => `'${s.replaceAll("'", "''")}'`).join(', '));
  return sql`${a}.status IN (${list})
  AND ${a}.valid_from <= ${at}::timestamptz AND (${a}.valid_to IS NULL OR ${a}.valid_to > ${at}::timestamptz)`;
}

/** A fact as memory held it at `asOf` (null = now): see visibility.ts, factHeldAt. */
export function factHeld(alias: string, asOf: Date | null): SqlFragment {
  return withPlaceholder(asOf, (p) => factHeldAt(alias, p));
}

/** A chunk as memory held it at `asOf` (null = now): see visibility.ts, chunkHeldAt. */
export function chunkHeld(alias: string, asOf: Date | null): SqlFragment {
  return withPlaceholder(asOf, (p) => chunkHeldAt(alias, p));
}
