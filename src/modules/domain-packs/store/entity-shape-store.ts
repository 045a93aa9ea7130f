import type { Queryable } from '../../../db/database.js';
import { visible } from '../../../kernel/store/visibility.js';
import { run, sql } from '../../../kernel/store/sql.js';

/**
 * What write-time checks need to know about entities that may already exist: their kind, whether
 * they are placeholders, their current attributes and snapshot bookkeeping. Only entities the
 * writer can see: a hidden one reads as absent here as everywhere (its kind would otherwise show
 * in a rejection message).
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
  visibleScopes: string[] | null,
): Promise<Map<string, EntityShape>> {
  if (keys.length === 0) return new Map();
  const { rows } = await run<EntityShape>(
    q,
    sql`/* findEntityShapes */
     SELECT e.key, e.kind, e.title, e.placeholder, e.attributes, e.stale, e.snapshot_scope AS "snapshotScope",
            e.snapshot_id AS "snapshotId"
     FROM entities e WHERE e.namespace = ${namespace} AND e.key = ANY(${[...new Set(keys)]}::text[]) AND ${visible('e', visibleScopes)}`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}
