/**
 * Reads of the quality harness: which observations (conversation turns) a packed item rests
 * on, so that a pack can be scored against a question's evidence.
 */
import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';
import { visible } from '../../../kernel/store/visibility.js';

export interface ItemObservations {
  /** Chunk id → its observation (none for document chunks). */
  chunks: Map<string, string[]>;
  /** Fact id → the observations it was asserted from. */
  facts: Map<string, string[]>;
  /** Session id → its observations in time order. */
  sessions: Map<string, string[]>;
}

export async function observationsOfItems(
  q: Queryable,
  namespace: string,
  items: { chunkIds: number[]; factIds: string[]; sessionIds: string[] },
  visibleScopes: string[] | null,
): Promise<ItemObservations> {
  const [chunks, facts, turns] = await Promise.all([
    run<{ id: string; obs: string | null }>(
      q,
      sql`/* evalChunkObservations */ SELECT c.chunk_id::text AS id, c.observation_id AS obs FROM chunks c
       WHERE c.namespace = ${namespace} AND c.chunk_id = ANY(${items.chunkIds}::bigint[]) AND ${visible('c', visibleScopes)}`,
    ),
    run<{ id: string; obs: string[] }>(
      q,
      sql`/* evalFactObservations */ SELECT f.fact_id AS id, f.observation_ids AS obs FROM facts f
       WHERE f.namespace = ${namespace} AND f.fact_id = ANY(${items.factIds}::text[]) AND ${visible('f', visibleScopes)}`,
    ),
    run<{ session: string; obs: string }>(
      q,
      sql`/* evalSessionObservations */ SELECT o.session_id AS session, o.observation_id AS obs FROM observations o
       WHERE o.namespace = ${namespace} AND o.session_id = ANY(${items.sessionIds}::text[]) AND ${visible('o', visibleScopes)}
       ORDER BY o.occurred_at, o.arrival`,
    ),
  ]);
  const sessions = new Map<string, string[]>();
  for (const r of turns.rows) sessions.set(r.session, [...(sessions.get(r.session) ?? []), r.obs]);
  return {
    chunks: new Map(chunks.rows.map((r) => [r.id, r.obs ? [r.obs] : []])),
    facts: new Map(facts.rows.map((r) => [r.id, r.obs])),
    sessions,
  };
}
