import type { Queryable } from '../../db/database.js';
import { run, sql } from './sql.js';

/**
 * Roles of a mention: which way an observation touched an entity. `episode` marks the episodes
 * an observation produced (Observation.episodes reads them); `entity` an entity assertion;
 * `fact` an endpoint of a fact assertion. (`node`, the observation's own chunk owner, is not
 * written: its chunks lead back through observation_id, and the row would cost throughput.)
 * `actor` / `subject` / `mention` are written by entity linking (store/entity-link-store.ts).
 */
export type MentionRole = 'episode' | 'entity' | 'fact' | 'node' | 'mention' | 'actor' | 'subject';

export interface MentionWrite {
  entityKey: string;
  observationId: string;
  role: MentionRole;
}

/** One multi-row statement; a pair already recorded keeps its first role. */
export async function insertMentions(
  q: Queryable,
  namespace: string,
  mentions: MentionWrite[],
): Promise<void> {
  if (mentions.length === 0) return;
  await run(
    q,
    sql`/* insertMentions */
     INSERT INTO mentions (namespace, entity_key, observation_id, role)
     SELECT ${namespace}, m.entity_key, m.observation_id, m.role
     FROM jsonb_to_recordset(${JSON.stringify(
       mentions.map((m) => ({ entity_key: m.entityKey, observation_id: m.observationId, role: m.role })),
     )}::jsonb) AS m(entity_key text, observation_id text, role text)
     ON CONFLICT (namespace, entity_key, observation_id) DO NOTHING`,
  );
}

/** Deletes every mention of an entity (purge); returns how many there were. */
export async function deleteMentionsOfEntity(
  q: Queryable,
  namespace: string,
  entityKey: string,
): Promise<number> {
  const { rowCount } = await run(
    q,
    sql`/* deleteMentionsOfEntity */ DELETE FROM mentions WHERE namespace = ${namespace} AND entity_key = ${entityKey}`,
  );
  return rowCount;
}
