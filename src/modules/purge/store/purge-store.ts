import type { Queryable } from '../../../db/database.js';
import { factVisibleTo, visibleTo } from '../../../kernel/store/visibility.js';

/** What purging an entity removed from its own tables (facts and mentions are counted by their stores). */
export interface PurgedEntity {
  kind: string;
  title: string;
  placeholder: boolean;
  versions: number;
  chunks: number;
}

/**
 * Whether a row the caller cannot see depends on an observation or an entity: a fact citing the
 * observation or touching the entity, a chunk cut from the observation or owned by the entity,
 * or a mention of the entity drawn from a hidden observation. Redacting or purging would have
 * to change that row, and hidden rows never change, so the caller may not do it.
 */
export async function hiddenDependents(
  q: Queryable,
  namespace: string,
  target: { observationId: string } | { entityKey: string },
  visibleScopes: string[] | null,
): Promise<boolean> {
  // One shape per target kind, so each branch can use its own index.
  const sql =
    'observationId' in target
      ? `/* hiddenDependentsOfObservation */
         SELECT EXISTS (
           SELECT 1 FROM facts f
           WHERE f.namespace = $1 AND f.observation_ids @> ARRAY[$2::text] AND NOT ${factVisibleTo('f', '$3')}
         ) OR EXISTS (
           SELECT 1 FROM chunks c
           WHERE c.namespace = $1 AND c.observation_id = $2 AND NOT ${visibleTo('c', '$3')}
         ) AS hidden`
      : `/* hiddenDependentsOfEntity */
         SELECT EXISTS (
           SELECT 1 FROM facts f
           WHERE f.namespace = $1 AND f.subject = $2 AND NOT ${factVisibleTo('f', '$3')}
         ) OR EXISTS (
           SELECT 1 FROM facts f
           WHERE f.namespace = $1 AND f.object = $2 AND NOT ${factVisibleTo('f', '$3')}
         ) OR EXISTS (
           SELECT 1 FROM chunks c
           WHERE c.namespace = $1 AND c.node_key = $2 AND NOT ${visibleTo('c', '$3')}
         ) OR EXISTS (
           SELECT 1 FROM mentions m JOIN observations o
             ON o.namespace = m.namespace AND o.observation_id = m.observation_id
           WHERE m.namespace = $1 AND m.entity_key = $2 AND NOT ${visibleTo('o', '$3')}
         ) AS hidden`;
  const id = 'observationId' in target ? target.observationId : target.entityKey;
  const { rows } = await q.query<{ hidden: boolean }>(sql, [namespace, id, visibleScopes]);
  return rows[0]?.hidden ?? false;
}

/** Locks the entity for the purge; false when it does not exist or is hidden from the caller. */
export async function lockVisibleEntity(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<boolean> {
  const { rows } = await q.query(
    `/* lockEntityForPurge */
     SELECT 1 FROM entities e WHERE e.namespace = $1 AND e.key = $2 AND ${visibleTo('e', '$3')} FOR UPDATE`,
    [namespace, key, visibleScopes],
  );
  return rows.length > 0;
}

/**
 * Deletes an entity the caller can see, its attribute versions and its chunks (postings follow
 * by trigger). Returns null when the entity does not exist or is hidden from the caller.
 */
export async function deleteEntityRows(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<PurgedEntity | null> {
  const { rows } = await q.query<{ kind: string; title: string; placeholder: boolean }>(
    `/* deleteEntity */
     DELETE FROM entities e WHERE e.namespace = $1 AND e.key = $2 AND ${visibleTo('e', '$3')}
     RETURNING e.kind, e.title, e.placeholder`,
    [namespace, key, visibleScopes],
  );
  const entity = rows[0];
  if (!entity) return null;
  const versions = await q.query(
    `/* deleteEntityVersions */ DELETE FROM entity_versions WHERE namespace = $1 AND key = $2`,
    [namespace, key],
  );
  const chunks = await q.query(
    `/* deleteChunksOfEntity */ DELETE FROM chunks c WHERE c.namespace = $1 AND c.node_key = $2
     AND ${visibleTo('c', '$3')}`,
    [namespace, key, visibleScopes],
  );
  return { ...entity, versions: versions.rowCount, chunks: chunks.rowCount };
}
