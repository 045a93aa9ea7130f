/**
 * The `sql` tagged template: statements written with their values inline, numbered `$1…$n`
 * when run, so that fragments compose (a predicate written once, used by every statement that
 * needs it) and no statement carries a hand-numbered placeholder.
 *
 *   sql`SELECT … FROM facts f WHERE ${inNamespaces('f', namespaces)} AND ${visible('f', scopes)}`
 *
 * An interpolated value becomes one parameter (a list is one array parameter: `= ANY(${ids}::text[])`);
 * an interpolated fragment is spliced in; a `param(value)` used several times is bound once.
 * Optional parts are fragments or `empty`; identifiers chosen by code go in through `ident`.
 * No value is ever written into the text. Only the stores use it: SQL lives there. The shared
 * predicates (namespace, visibility, time) are in visibility.ts.
 */
import type { Queryable, QueryResult } from '../../db/database.js';

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

/** Trusted SQL text (keywords, operators and constants chosen by code, never by input). */
export function raw(text: string): SqlFragment {
  return new SqlFragment([text]);
}

/** Nothing: the absent branch of an optional fragment (`cond ? sql\`AND …\` : empty`). */
export const empty: SqlFragment = new SqlFragment([]);

const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * A table alias, column or `alias.column` chosen by code. Checked, not quoted: a name that is
 * not a plain lower-case identifier is a bug, and fails before any SQL runs.
 */
export function ident(name: string): SqlFragment {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return new SqlFragment([name]);
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
