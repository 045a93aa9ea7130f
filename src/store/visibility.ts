/**
 * The visibility predicate every read statement carries. `param` is a placeholder such as `$3`
 * bound to the principal's scopes (text[]) or NULL for unrestricted principals. A row with no
 * visibility scopes is visible to everyone who may read its namespace.
 */
export function visibleTo(alias: string, param: string): string {
  const col = alias ? `${alias}.visibility` : 'visibility';
  return `(${param}::text[] IS NULL OR cardinality(${col}) = 0 OR ${col} && ${param}::text[])`;
}
