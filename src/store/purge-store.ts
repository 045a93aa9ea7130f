import type { Queryable } from '../db/database.js';

/** What purging an entity removed from its own tables (facts and mentions are counted by their stores). */
export interface PurgedEntity {
  kind: string;
  title: string;
  placeholder: boolean;
  versions: number;
  chunks: number;
}

/**
 * Deletes an entity, its attribute versions and its chunks (postings follow by trigger).
 * Returns null when the entity does not exist. Write paths see every row whatever the
 * caller's scopes: a purge is total.
 */
export async function deleteEntityRows(
  q: Queryable,
  namespace: string,
  key: string,
): Promise<PurgedEntity | null> {
  const { rows } = await q.query<{ kind: string; title: string; placeholder: boolean }>(
    `/* deleteEntity */
     DELETE FROM entities WHERE namespace = $1 AND key = $2 RETURNING kind, title, placeholder`,
    [namespace, key],
  );
  const entity = rows[0];
  if (!entity) return null;
  const versions = await q.query(
    `/* deleteEntityVersions */ DELETE FROM entity_versions WHERE namespace = $1 AND key = $2`,
    [namespace, key],
  );
  const chunks = await q.query(
    `/* deleteChunksOfEntity */ DELETE FROM chunks WHERE namespace = $1 AND node_key = $2`,
    [namespace, key],
  );
  return { ...entity, versions: versions.rowCount, chunks: chunks.rowCount };
}
