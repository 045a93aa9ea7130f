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
export function factVisibleTo(
  alias: string,
  param: string,
  /** Endpoints the statement already holds under this predicate (the row it reads facts of…). */
  checked: readonly ('subject' | 'object')[] = [],
): string {
  const f = alias ? `${alias}.` : '';
  // A scalar subquery stays a primary-key probe per fact; an EXISTS may be planned as a
  // semi-join that hashes every entity of the namespace. No row (absent endpoint): not visible.
  const endpoint = (column: 'subject' | 'object') =>
    `coalesce((SELECT ${visibleTo('fe', param)} FROM entities fe
               WHERE fe.namespace = ${f}namespace AND fe.key = ${f}${column}), false)`;
  const ends = (['subject', 'object'] as const).filter((side) => !checked.includes(side)).map(endpoint);
  return `(${[visibleTo(alias, param), ...ends].join(' AND ')})`;
}

/**
 * A chunk as memory held it at `param` (a timestamptz placeholder; NULL = now, no bound): an
 * observation's text by the observation's occurredAt, any other chunk (a document section) by
 * when it was written.
 */
export function chunkHeldAt(alias: string, param: string): string {
  const a = alias ? `${alias}.` : '';
  return `(${param}::timestamptz IS NULL OR coalesce(${a}occurred_at, ${a}created_at) <= ${param}::timestamptz)`;
}

/**
 * A fact as memory held it at `param` (NULL = now, no bound), beside being valid then: one
 * drawn from observations needs one of them to have occurred by then (the rule observations
 * themselves follow), so a later message never leaks into an earlier instant through its facts.
 * A fact with no observation (asserted directly, a document link) has no other time than its
 * validFrom, which validity already bounds.
 */
export function factHeldAt(alias: string, param: string): string {
  const f = alias ? `${alias}.` : '';
  return `(${param}::timestamptz IS NULL OR cardinality(${f}observation_ids) = 0
    OR EXISTS (SELECT 1 FROM observations ho WHERE ho.namespace = ${f}namespace
               AND ho.observation_id = ANY(${f}observation_ids) AND ho.occurred_at <= ${param}::timestamptz))`;
}
