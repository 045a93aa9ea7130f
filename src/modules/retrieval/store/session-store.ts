import type { Queryable } from '../../../db/database.js';
import { visible } from '../../../kernel/store/visibility.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';

/** Sessions of packed items and their cached compacts (see migration 009). */

export interface ItemSessionRow {
  /** `chunk:<id>` or `observation:<id>`. */
  ref: string;
  sessionId: string;
}

/** The session of each chunk (through its observation) and observation, when it has one. */
export async function sessionsOfItems(
  q: Queryable,
  namespace: string,
  chunkIds: number[],
  observationIds: string[],
  visibleScopes: string[] | null,
): Promise<ItemSessionRow[]> {
  if (chunkIds.length === 0 && observationIds.length === 0) return [];
  const nsParam = param(namespace);
  const scopesParam = param(visibleScopes);
  const { rows } = await run<ItemSessionRow>(
    q,
    sql`/* sessionsOfItems */
     SELECT 'chunk:' || c.chunk_id AS ref, o.session_id AS "sessionId"
     FROM chunks c JOIN observations o ON o.namespace = c.namespace AND o.observation_id = c.observation_id
     WHERE c.namespace = ${nsParam} AND c.chunk_id = ANY(${chunkIds}::bigint[]) AND o.session_id IS NOT NULL
       AND ${visible('c', scopesParam)} AND ${visible('o', scopesParam)}
     UNION ALL
     SELECT 'observation:' || o.observation_id, o.session_id
     FROM observations o
     WHERE o.namespace = ${nsParam} AND o.observation_id = ANY(${observationIds}::text[]) AND o.session_id IS NOT NULL
       AND ${visible('o', scopesParam)}`,
  );
  return rows;
}

export interface SessionState {
  sessionId: string;
  itemCount: number;
  lastRecordedAt: Date;
  /** True when an observation of the session has visibility scopes: never compacted. */
  restricted: boolean;
}

export async function sessionStates(
  q: Queryable,
  namespace: string,
  sessionIds: string[],
): Promise<SessionState[]> {
  if (sessionIds.length === 0) return [];
  const { rows } = await run<SessionState>(
    q,
    sql`/* sessionStates */
     SELECT o.session_id AS "sessionId", count(*)::int AS "itemCount", max(o.recorded_at) AS "lastRecordedAt",
       bool_or(cardinality(o.visibility) > 0) AS restricted
     FROM observations o
     WHERE o.namespace = ${namespace} AND o.session_id = ANY(${sessionIds}::text[]) AND o.status <> 'REDACTED'
       AND ${visible('o', raw('NULL'))}
     GROUP BY o.session_id`,
  );
  return rows.map((r) => ({ ...r, itemCount: Number(r.itemCount) }));
}

export interface SessionCompactRow {
  sessionId: string;
  summary: string;
  itemCount: number;
  lastRecordedAt: Date;
  firstAt: Date;
  lastAt: Date;
}

const COMPACT_COLUMNS = `s.session_id AS "sessionId", s.summary, s.item_count AS "itemCount",
  s.last_recorded_at AS "lastRecordedAt", s.first_at AS "firstAt", s.last_at AS "lastAt"`;

export async function findCompacts(
  q: Queryable,
  namespace: string,
  sessionIds: string[],
  visibleScopes: string[] | null,
): Promise<SessionCompactRow[]> {
  const { rows } = await run<SessionCompactRow>(
    q,
    sql`/* findCompacts */
     SELECT ${raw(COMPACT_COLUMNS)} FROM session_compacts s
     WHERE s.namespace = ${namespace} AND s.session_id = ANY(${sessionIds}::text[]) AND ${visible('s', visibleScopes)}`,
  );
  return rows.map((r) => ({ ...r, itemCount: Number(r.itemCount) }));
}

export interface SessionMessageRow {
  content: string;
  occurredAt: Date;
}

/** The session's unrestricted, unredacted observation texts in time order (bounded). */
export async function sessionMessages(
  q: Queryable,
  namespace: string,
  sessionId: string,
  limit: number,
): Promise<SessionMessageRow[]> {
  const { rows } = await run<SessionMessageRow>(
    q,
    sql`/* sessionMessages */
     SELECT o.content, o.occurred_at AS "occurredAt"
     FROM observations o
     WHERE o.namespace = ${namespace} AND o.session_id = ${sessionId} AND o.status <> 'REDACTED' AND o.content IS NOT NULL
       AND cardinality(o.visibility) = 0
     ORDER BY o.occurred_at, o.arrival LIMIT ${limit}`,
  );
  return rows;
}

export async function saveCompact(q: Queryable, namespace: string, c: SessionCompactRow): Promise<void> {
  await run(
    q,
    sql`/* saveCompact */
     INSERT INTO session_compacts (namespace, session_id, summary, item_count, last_recorded_at, first_at, last_at)
     VALUES (${namespace}, ${c.sessionId}, ${c.summary}, ${c.itemCount}, ${c.lastRecordedAt}::timestamptz, ${c.firstAt}::timestamptz, ${c.lastAt}::timestamptz)
     ON CONFLICT (namespace, session_id) DO UPDATE SET summary = excluded.summary,
       item_count = excluded.item_count, last_recorded_at = excluded.last_recorded_at,
       first_at = excluded.first_at, last_at = excluded.last_at, built_at = now()`,
  );
}
