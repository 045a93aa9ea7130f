import type { Queryable } from '../db/database.js';

/**
 * What write-time checks need to know about entities that may already exist: their kind, whether
 * they are placeholders, their current attributes and snapshot bookkeeping. Write paths see every
 * row whatever the caller's scopes (as the upsert itself does), so no visibility predicate here;
 * nothing of it is returned to callers beyond a kind name in a rejection message.
 */
export interface EntityShape {
  key: string;
  kind: string;
  title: string;
  placeholder: boolean;
  attributes: Record<string, unknown>;
  stale: boolean;
  snapshotScope: string | null;
  snapshotId: string | null;
}

export async function findEntityShapes(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
): Promise<Map<string, EntityShape>> {
  if (keys.length === 0) return new Map();
  const { rows } = await q.query<EntityShape>(
    `/* findEntityShapes */
     SELECT key, kind, title, placeholder, attributes, stale, snapshot_scope AS "snapshotScope",
            snapshot_id AS "snapshotId"
     FROM entities WHERE namespace = $1 AND key = ANY($2::text[])`,
    [namespace, [...new Set(keys)]],
  );
  return new Map(rows.map((r) => [r.key, r]));
}
