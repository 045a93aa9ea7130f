import type { Queryable } from '../../../db/database.js';
import { chunkRecordOf, type ChunkWrite } from '../../../kernel/store/chunk-store.js';
import { deleteChunksPosted, postedColumns, postingsOfInserted } from '../../../kernel/store/postings.js';
import { param, run, sql } from '../../../kernel/store/sql.js';
import { visible } from '../../../kernel/store/visibility.js';
import type { SummarySources } from '../summary-material.js';

/**
 * Stored summaries are chunks of their entity (kind 'summary', order -1, -2, … one per visibility
 * class), so the search channels find them like any chunk; their meta carries the evidence class
 * DERIVED, what they rest on and when they were built.
 */
export const SUMMARY_KIND = 'summary';

export interface SummaryMeta {
  evidence: 'DERIVED';
  sources: SummarySources;
  builtAt: string;
  /** 'extractive', or the model that wrote it. */
  by: string;
}

export interface StoredSummary {
  chunkId: number;
  nodeKey: string;
  order: number;
  text: string;
  visibility: string[];
  meta: SummaryMeta;
  /** A change to its evidence is waiting to be summarised. */
  stale: boolean;
}

export interface SummaryWrite {
  nodeKey: string;
  chunk: ChunkWrite;
}

/** The summaries of `keys` now replace their old ones: two statements. */
export async function replaceSummaries(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  summaries: readonly SummaryWrite[],
): Promise<void> {
  if (keys.length === 0) return;
  await run(
    q,
    sql`/* deleteSummaries */ ${deleteChunksPosted(
      sql`WHERE c.namespace = ${namespace} AND c.kind = ${SUMMARY_KIND} AND c.node_key = ANY(${[...keys]}::text[])`,
    )}`,
  );
  if (summaries.length === 0) return;
  const records = summaries.map((s) => ({ node_key: s.nodeKey, ...chunkRecordOf(s.chunk) }));
  await run(
    q,
    sql`/* insertSummaries */
     WITH written AS (
       INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, ts_config, source_path,
                           meta, scopes, visibility, observation_id, occurred_at, pii, pii_categories, embedding)
       SELECT ${namespace}, c.node_key, c.ord, c.kind, c.title, c.heading, c.text, c.search_text, c.ts_config::regconfig,
              c.source_path, c.meta, c.scopes, c.visibility, c.observation_id, c.occurred_at, c.pii, c.pii_categories,
              c.embedding::vector
       FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb)
         AS c(node_key text, ord int, kind text, title text, heading text, text text, search_text text,
              source_path text, meta jsonb, scopes text[], visibility text[], observation_id text, occurred_at timestamptz,
              pii boolean, pii_categories text[], embedding text, ts_config text)
       -- Only entities still there: one purged while its summary was being built gets none.
       WHERE EXISTS (SELECT 1 FROM entities e WHERE e.namespace = ${namespace} AND e.key = c.node_key)
       RETURNING ${postedColumns('chunks')}
     ), ${postingsOfInserted('written')}
     SELECT count(*)::int AS n FROM written`,
  );
}

/**
 * Drops, inside the transaction that removes them, every stored summary resting on the given
 * facts or observations, and every summary of the given entities: a redacted or purged source is
 * never served through a summary, not even until the refresher rebuilds it. One statement.
 */
export async function dropSummariesResting(
  q: Queryable,
  namespace: string,
  on: { facts?: readonly string[]; observations?: readonly string[]; entities?: readonly string[] },
): Promise<number> {
  const facts = [...(on.facts ?? [])];
  const observations = [...(on.observations ?? [])];
  const entities = [...(on.entities ?? [])];
  if (facts.length + observations.length + entities.length === 0) return 0;
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* dropSummariesResting */ ${deleteChunksPosted(
      sql`WHERE c.namespace = ${namespace} AND c.kind = ${SUMMARY_KIND}
       AND (c.node_key = ANY(${entities}::text[]) OR (c.meta->'sources'->'facts') ?| ${facts}::text[]
            OR (c.meta->'sources'->'observations') ?| ${observations}::text[])`,
    )}`,
  );
  return rows[0]?.n ?? 0;
}

/** The stored summaries of `keys` a reader with `visibleScopes` may see, with their staleness. */
export async function findSummaries(
  q: Queryable,
  namespace: string,
  keys: readonly string[],
  visibleScopes: string[] | null,
): Promise<StoredSummary[]> {
  if (keys.length === 0) return [];
  const { rows } = await run<StoredSummary>(
    q,
    sql`/* findSummaries */
     SELECT c.chunk_id AS "chunkId", c.node_key AS "nodeKey", c.ord AS "order", c.text, c.visibility, c.meta,
            EXISTS (SELECT 1 FROM summary_refresh r WHERE r.namespace = c.namespace AND r.entity_key = c.node_key) AS stale
     FROM chunks c
     WHERE c.namespace = ${namespace} AND c.kind = ${SUMMARY_KIND} AND c.node_key = ANY(${[...keys]}::text[])
       AND ${visible('c', visibleScopes)}`,
  );
  return rows.map((r) => ({ ...r, chunkId: Number(r.chunkId) }));
}

/** What a change touched, per namespace: entity keys, fact ids, observation ids. */
export interface TouchedRows {
  namespace: string;
  entities: string[];
  facts: string[];
  observations: string[];
}

/**
 * Marks for a refresh the entities the touched rows are evidence of: the entities themselves, both
 * ends of each fact, and what each observation mentions. A mark already waiting is pushed back to
 * `debounceMs` from now, so a burst is one rebuild, but never past `maxDelayMs` after it was first
 * made, so an entity that keeps changing is still summarised. One statement.
 */
export async function markTouched(
  q: Queryable,
  touched: readonly TouchedRows[],
  timing: { debounceMs: number; maxDelayMs: number },
): Promise<void> {
  if (touched.length === 0) return;
  await run(
    q,
    sql`/* markSummariesStale */
     WITH t AS (
       SELECT * FROM jsonb_to_recordset(${JSON.stringify(touched)}::jsonb)
         AS t(namespace text, entities text[], facts text[], observations text[])
     ), keys AS (
       SELECT t.namespace, k AS key FROM t, unnest(t.entities) AS k
       UNION SELECT f.namespace, unnest(ARRAY[f.subject, f.object]) FROM t
         JOIN facts f ON f.namespace = t.namespace AND f.fact_id = ANY(t.facts)
       UNION SELECT m.namespace, m.entity_key FROM t
         JOIN mentions m ON m.namespace = t.namespace AND m.observation_id = ANY(t.observations)
     )
     INSERT INTO summary_refresh AS r (namespace, entity_key, due_at)
     SELECT k.namespace, k.key, clock_timestamp() + make_interval(secs => ${timing.debounceMs / 1000})
     FROM keys k
     JOIN entities e ON e.namespace = k.namespace AND e.key = k.key
     WHERE e.kind NOT IN ('observation', 'episode', 'session')
     ON CONFLICT (namespace, entity_key) DO UPDATE
       SET due_at = least(excluded.due_at, r.first_marked_at + make_interval(secs => ${timing.maxDelayMs / 1000})),
           marked_at = clock_timestamp()`,
  );
}

/** Marks every entity of a namespace that has anything a summary could state. One statement. */
export async function markNamespace(q: Queryable, namespace: string): Promise<number> {
  const { rowCount } = await run(
    q,
    sql`/* markNamespaceSummaries */
     INSERT INTO summary_refresh AS r (namespace, entity_key, due_at)
     SELECT e.namespace, e.key, clock_timestamp() FROM entities e
     WHERE e.namespace = ${namespace} AND NOT e.placeholder AND e.kind NOT IN ('observation', 'episode', 'session')
     ON CONFLICT (namespace, entity_key) DO UPDATE SET due_at = excluded.due_at, marked_at = clock_timestamp()`,
  );
  return rowCount;
}

export interface ClaimedMark {
  namespace: string;
  key: string;
  /** As the database holds it (text, microseconds kept): a clear compares it exactly. */
  markedAt: string;
}

/** Takes up to `limit` due marks (one namespace at a time) for `leaseSeconds`. One statement. */
export async function claimDue(q: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedMark[]> {
  const { rows } = await run<ClaimedMark>(
    q,
    sql`/* claimSummaryRefresh */
     WITH head AS (
       SELECT r.namespace FROM summary_refresh r
       WHERE r.due_at <= clock_timestamp() AND (r.locked_until IS NULL OR r.locked_until < clock_timestamp())
       ORDER BY r.due_at LIMIT 1
     ), picked AS (
       SELECT r.namespace, r.entity_key FROM summary_refresh r JOIN head h ON h.namespace = r.namespace
       WHERE r.due_at <= clock_timestamp() AND (r.locked_until IS NULL OR r.locked_until < clock_timestamp())
       ORDER BY r.due_at, r.entity_key
       LIMIT ${param(limit)}
       FOR UPDATE OF r SKIP LOCKED
     )
     UPDATE summary_refresh r SET locked_until = clock_timestamp() + make_interval(secs => ${leaseSeconds})
     FROM picked p WHERE r.namespace = p.namespace AND r.entity_key = p.entity_key
     RETURNING r.namespace, r.entity_key AS key, r.marked_at::text AS "markedAt"`,
  );
  return rows;
}

/**
 * Clears the marks a rebuild answered; one a newer change marked again meanwhile stays, released
 * from the lease so it is taken at its due time. One statement.
 */
export async function clearMarks(
  q: Queryable,
  namespace: string,
  marks: readonly ClaimedMark[],
): Promise<void> {
  if (marks.length === 0) return;
  await run(
    q,
    sql`/* clearSummaryRefresh */
     WITH m AS (
       SELECT * FROM jsonb_to_recordset(${JSON.stringify(marks.map((m) => ({ key: m.key, at: m.markedAt })))}::jsonb)
         AS m(key text, at timestamptz)
     ), gone AS (
       DELETE FROM summary_refresh r USING m
       WHERE r.namespace = ${namespace} AND r.entity_key = m.key AND r.marked_at <= m.at
     )
     UPDATE summary_refresh r SET locked_until = NULL FROM m
     WHERE r.namespace = ${namespace} AND r.entity_key = m.key AND r.marked_at > m.at`,
  );
}

/** Milliseconds until the earliest mark falls due (or its lease ends); null when none waits. */
export async function nextDueInMs(q: Queryable): Promise<number | null> {
  const { rows } = await run<{ ms: number | null }>(
    q,
    sql`/* nextSummaryRefresh */
     SELECT (extract(epoch FROM min(greatest(r.due_at, coalesce(r.locked_until, r.due_at))) - clock_timestamp())
             * 1000)::float8 AS ms
     FROM summary_refresh r`,
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, ms);
}

export interface SummaryCounts {
  summaries: number;
  entities: number;
  pending: number;
}

/** How many summary chunks and summarised entities a namespace holds, and how many wait. */
export async function countSummaries(q: Queryable, namespace: string): Promise<SummaryCounts> {
  const { rows } = await run<SummaryCounts>(
    q,
    sql`/* countSummaries */
     SELECT (SELECT count(*)::int FROM chunks c WHERE c.namespace = ${namespace} AND c.kind = ${SUMMARY_KIND}) AS summaries,
            (SELECT count(DISTINCT c.node_key)::int FROM chunks c
             WHERE c.namespace = ${namespace} AND c.kind = ${SUMMARY_KIND}) AS entities,
            (SELECT count(*)::int FROM summary_refresh r WHERE r.namespace = ${namespace}) AS pending`,
  );
  return rows[0]!;
}

export interface RefreshGauges {
  /** Entities marked for a rebuild, and how many of them are due now. */
  marked: number;
  due: number;
  /** Seconds since the oldest mark was first made; 0 with none. */
  oldestSeconds: number;
}

/** The refresh queue across namespaces, for operators' metrics (no namespace is reported). One statement. */
export async function readRefreshGauges(q: Queryable): Promise<RefreshGauges> {
  const { rows } = await run<RefreshGauges>(
    q,
    sql`/* summaryRefreshGauges */
     SELECT count(*)::int AS marked,
            count(*) FILTER (WHERE r.due_at <= clock_timestamp())::int AS due,
            coalesce(extract(epoch FROM clock_timestamp() - min(r.first_marked_at)), 0)::float8 AS "oldestSeconds"
     FROM summary_refresh r`,
  );
  return rows[0] ?? { marked: 0, due: 0, oldestSeconds: 0 };
}
