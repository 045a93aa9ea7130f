import type { Queryable } from '../../../db/database.js';
import { noteChanges } from '../../../kernel/change-notice.js';
import { deleteChunksPosted } from '../../../kernel/store/postings.js';
import { type Param, param, run, type SqlFragment, sql } from '../../../kernel/store/sql.js';
import { factVisible, visible } from '../../../kernel/store/visibility.js';

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
  const ns = param(namespace);
  const scopes = param(visibleScopes);
  const id = param('observationId' in target ? target.observationId : target.entityKey);
  const statement =
    'observationId' in target
      ? sql`/* hiddenDependentsOfObservation */
         SELECT EXISTS (
           SELECT 1 FROM facts f
           WHERE f.namespace = ${ns} AND f.observation_ids @> ARRAY[${id}::text] AND NOT ${factVisible('f', scopes)}
         ) OR EXISTS (
           SELECT 1 FROM chunks c
           WHERE c.namespace = ${ns} AND c.observation_id = ${id} AND NOT ${visible('c', scopes)}
         ) AS hidden`
      : entityDependents(ns, id, scopes);
  const { rows } = await run<{ hidden: boolean }>(q, statement);
  return rows[0]?.hidden ?? false;
}

function entityDependents(ns: Param, key: Param, scopes: Param): SqlFragment {
  return sql`/* hiddenDependentsOfEntity */
         SELECT EXISTS (
           SELECT 1 FROM facts f
           WHERE f.namespace = ${ns} AND f.subject = ${key} AND NOT ${factVisible('f', scopes)}
         ) OR EXISTS (
           SELECT 1 FROM facts f
           WHERE f.namespace = ${ns} AND f.object = ${key} AND NOT ${factVisible('f', scopes)}
         ) OR EXISTS (
           -- Its summaries (negative orders) are derived: dropped with it, never a reason to refuse.
           SELECT 1 FROM chunks c
           WHERE c.namespace = ${ns} AND c.node_key = ${key} AND c.ord >= 0 AND NOT ${visible('c', scopes)}
         ) OR EXISTS (
           SELECT 1 FROM mentions m JOIN observations o
             ON o.namespace = m.namespace AND o.observation_id = m.observation_id
           WHERE m.namespace = ${ns} AND m.entity_key = ${key} AND NOT ${visible('o', scopes)}
         ) AS hidden`;
}

/** Locks the entity for the purge; false when it does not exist or is hidden from the caller. */
export async function lockVisibleEntity(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<boolean> {
  const { rows } = await run(
    q,
    sql`/* lockEntityForPurge */
     SELECT 1 FROM entities e WHERE e.namespace = ${namespace} AND e.key = ${key} AND ${visible('e', visibleScopes)} FOR UPDATE`,
  );
  return rows.length > 0;
}

/**
 * Deletes an entity the caller can see, its attribute versions and its chunks with their
 * postings. Returns null when the entity does not exist or is hidden from the caller.
 */
export async function deleteEntityRows(
  q: Queryable,
  namespace: string,
  key: string,
  visibleScopes: string[] | null,
): Promise<PurgedEntity | null> {
  const { rows } = await run<{
    kind: string;
    title: string;
    placeholder: boolean;
    visibility: string[];
    document: boolean;
  }>(
    q,
    sql`/* deleteEntity */
     DELETE FROM entities e WHERE e.namespace = ${namespace} AND e.key = ${key} AND ${visible('e', visibleScopes)}
     RETURNING e.kind, e.title, e.placeholder, e.visibility, e.content_hash IS NOT NULL AS document`,
  );
  const deleted = rows[0];
  if (!deleted) return null;
  const { visibility, document, ...entity } = deleted;
  // An observation's node is announced as its observation, never as an entity.
  if (entity.kind !== 'observation') {
    const removed = [{ id: key, vis: [visibility], refs: [key] }];
    await noteChanges(q, [{ namespace, kind: document ? 'DOCUMENT' : 'ENTITY', ids: [], removed }]);
  }
  const versions = await run(
    q,
    sql`/* deleteEntityVersions */ DELETE FROM entity_versions WHERE namespace = ${namespace} AND key = ${key}`,
  );
  const chunks = await run<{ n: number }>(
    q,
    sql`/* deleteChunksOfEntity */ ${deleteChunksPosted(
      sql`WHERE c.namespace = ${namespace} AND c.node_key = ${key} AND ${visible('c', visibleScopes)}`,
    )}`,
  );
  return { ...entity, versions: versions.rowCount, chunks: chunks.rows[0]?.n ?? 0 };
}
