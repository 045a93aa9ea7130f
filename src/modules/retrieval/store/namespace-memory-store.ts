/**
 * Which namespaces hold anything the caller can read (an entity, an observation or a chunk):
 * asked only of empty answers, to say why they are empty. A namespace holding only rows hidden
 * from the caller answers like one holding nothing.
 */
import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';
import { visible } from '../../../kernel/store/visibility.js';

export async function namespacesWithMemory(
  q: Queryable,
  namespaces: readonly string[],
  visibleScopes: string[] | null,
): Promise<Set<string>> {
  if (namespaces.length === 0) return new Set();
  const { rows } = await run<{ namespace: string }>(
    q,
    sql`/* namespacesWithMemory */
     SELECT n.ns AS namespace FROM unnest(${[...namespaces]}::text[]) AS n(ns)
     WHERE EXISTS (SELECT 1 FROM entities e WHERE e.namespace = n.ns AND ${visible('e', visibleScopes)})
        OR EXISTS (SELECT 1 FROM observations o WHERE o.namespace = n.ns AND ${visible('o', visibleScopes)})
        OR EXISTS (SELECT 1 FROM chunks c WHERE c.namespace = n.ns AND ${visible('c', visibleScopes)})`,
  );
  return new Set(rows.map((r) => r.namespace));
}
