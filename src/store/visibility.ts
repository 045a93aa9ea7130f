/**
 * The visibility predicate every read and write statement carries. `param` is a placeholder
 * such as `$3` bound to the principal's scopes (text[]) or NULL for unrestricted principals. A
 * row with no visibility scopes is visible to everyone who may read its namespace.
 */
export function visibleTo(alias: string, param: string): string {
  const col = alias ? `${alias}.visibility` : 'visibility';
  return `(${param}::text[] IS NULL OR cardinality(${col}) = 0 OR ${col} && ${param}::text[])`;
}

/**
 * A fact is visible only when it is and both its endpoints exist and are visible: a hidden
 * node hides every edge that touches it, on every read and write path alike.
 */
export function factVisibleTo(alias: string, param: string): string {
  const f = alias ? `${alias}.` : '';
  // A scalar subquery stays a primary-key probe per fact; an EXISTS may be planned as a
  // semi-join that hashes every entity of the namespace. No row (absent endpoint): not visible.
  const endpoint = (column: 'subject' | 'object') =>
    `coalesce((SELECT ${visibleTo('fe', param)} FROM entities fe
               WHERE fe.namespace = ${f}namespace AND fe.key = ${f}${column}), false)`;
  return `(${visibleTo(alias, param)} AND ${endpoint('subject')} AND ${endpoint('object')})`;
}
