import type { Queryable } from '../../db/database.js';
import { changedIds, noteChanges } from '../change-notice.js';
import { chunkRecordOf, deleteChunksOfNode } from './chunk-store.js';
import { contextualChunkColumns, windowCte } from './context-index-store.js';
import { deleteChunksPosted, postedColumns, postingsOfInserted } from './postings.js';
import { param, raw, run, sql } from './sql.js';
import { visible } from './visibility.js';

export type ObservationStatus = 'RECEIVED' | 'PROCESSED' | 'PARTIALLY_PROCESSED' | 'FAILED' | 'REDACTED';

export interface ObservationRow {
  namespace: string;
  observationId: string;
  sourceSystem: string;
  sourceStream: string | null;
  sourceExternalId: string | null;
  kind: string;
  occurredAt: Date;
  recordedAt: Date;
  actorType: string | null;
  actorId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  scopes: string[];
  visibility: string[];
  content: string | null;
  data: unknown;
  provenance: unknown;
  status: ObservationStatus;
  statusReason: string | null;
  sessionId: string | null;
  pii: boolean;
  piiCategories: string[];
}

export const OBSERVATION_COLUMNS = `
  o.namespace, o.observation_id AS "observationId", o.source_system AS "sourceSystem",
  o.source_stream AS "sourceStream", o.source_external_id AS "sourceExternalId", o.kind,
  o.occurred_at AS "occurredAt", o.recorded_at AS "recordedAt", o.actor_type AS "actorType",
  o.actor_id AS "actorId", o.subject_type AS "subjectType", o.subject_id AS "subjectId",
  o.scopes, o.visibility, o.content, o.data, o.provenance, o.status, o.status_reason AS "statusReason",
  o.session_id AS "sessionId", o.pii, o.pii_categories AS "piiCategories"`;

/** Rows in the order of `ids`; null where absent or invisible. */
export async function findObservationsByIds(
  q: Queryable,
  namespace: string,
  ids: readonly string[],
  visibleScopes: string[] | null,
): Promise<(ObservationRow | null)[]> {
  const { rows } = await run<ObservationRow>(
    q,
    sql`/* findObservationsByIds */
     SELECT ${raw(OBSERVATION_COLUMNS)} FROM observations o
     WHERE o.namespace = ${namespace} AND o.observation_id = ANY(${ids}::text[]) AND ${visible('o', visibleScopes)}`,
  );
  const byId = new Map(rows.map((r) => [r.observationId, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** A new observation as the write path stores it (status already decided for plain items). */
export type ObservationWrite = Omit<ObservationRow, 'namespace'>;

/** Which of `ids` are recorded and visible to the caller. */
export async function findExistingObservationIds(
  q: Queryable,
  namespace: string,
  ids: readonly string[],
  visibleScopes: string[] | null,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await run<{ id: string }>(
    q,
    sql`/* findExistingObservationIds */
     SELECT o.observation_id AS id FROM observations o
     WHERE o.namespace = ${namespace} AND o.observation_id = ANY(${ids}::text[]) AND ${visible('o', visibleScopes)}`,
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Which of `ids` are already recorded, split by whether the caller can see them: a visible one
 * is a DUPLICATE, a hidden one is a collision (its source identity is taken by a row the caller
 * cannot see), which the visibility predicate decides in SQL.
 */
export async function findRecordedObservations(
  q: Queryable,
  namespace: string,
  ids: readonly string[],
  visibleScopes: string[] | null,
): Promise<{ visible: Set<string>; hidden: Set<string> }> {
  const shown = new Set<string>();
  const hidden = new Set<string>();
  if (ids.length === 0) return { visible: shown, hidden };
  const { rows } = await run<{ id: string; visible: boolean }>(
    q,
    sql`/* findRecordedObservations */
     SELECT o.observation_id AS id, ${visible('o', visibleScopes)} AS visible FROM observations o
     WHERE o.namespace = ${namespace} AND o.observation_id = ANY(${ids}::text[])`,
  );
  for (const r of rows) (r.visible ? shown : hidden).add(r.id);
  return { visible: shown, hidden };
}

/**
 * Inserts observations in one multi-row statement. Rows whose id exists already (a concurrent
 * writer won the race) are skipped; the ids actually inserted come back.
 */
export async function insertObservations(
  q: Queryable,
  namespace: string,
  rows: ObservationWrite[],
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const payload = rows.map((r, i) => ({
    observation_id: r.observationId,
    source_system: r.sourceSystem,
    source_stream: r.sourceStream,
    source_external_id: r.sourceExternalId,
    kind: r.kind,
    occurred_at: r.occurredAt.toISOString(),
    recorded_at: r.recordedAt.toISOString(),
    actor_type: r.actorType,
    actor_id: r.actorId,
    subject_type: r.subjectType,
    subject_id: r.subjectId,
    scopes: r.scopes,
    visibility: r.visibility,
    content: r.content,
    data: r.data ?? null,
    provenance: r.provenance ?? null,
    status: r.status,
    status_reason: r.statusReason,
    session_id: r.sessionId,
    pii: r.pii,
    pii_categories: r.piiCategories,
    ord: i,
  }));
  const { rows: inserted } = await run<{ id: string }>(
    q,
    sql`/* insertObservations */
     INSERT INTO observations (namespace, observation_id, source_system, source_stream, source_external_id, kind,
                               occurred_at, recorded_at, actor_type, actor_id, subject_type, subject_id, scopes,
                               visibility, content, data, provenance, status, status_reason, session_id, pii,
                               pii_categories)
     SELECT ${namespace}, r.observation_id, r.source_system, r.source_stream, r.source_external_id, r.kind,
            r.occurred_at, r.recorded_at, r.actor_type, r.actor_id, r.subject_type, r.subject_id,
            coalesce(r.scopes, '{}'), coalesce(r.visibility, '{}'), r.content, r.data, r.provenance, r.status,
            r.status_reason, r.session_id, r.pii, coalesce(r.pii_categories, '{}')
     FROM jsonb_to_recordset(${JSON.stringify(payload)}::jsonb) AS r(observation_id text, source_system text,
            source_stream text, source_external_id text, kind text, occurred_at timestamptz, recorded_at timestamptz,
            actor_type text, actor_id text, subject_type text, subject_id text, scopes text[], visibility text[],
            content text, data jsonb, provenance jsonb, status text, status_reason text, session_id text, pii boolean,
            pii_categories text[], ord int)
     -- The arrival sequence is drawn in this order: ties of occurred_at keep the batch's order.
     ORDER BY r.ord
     ON CONFLICT (namespace, observation_id) DO NOTHING
     RETURNING observation_id AS id`,
  );
  await noteChanges(q, changedIds(namespace, 'OBSERVATION', inserted));
  return new Set(inserted.map((r) => r.id));
}

/** The end of an observation's processing: PROCESSED, PARTIALLY_PROCESSED or FAILED, with why. */
export async function setObservationStatus(
  q: Queryable,
  namespace: string,
  observationId: string,
  status: ObservationStatus,
  reason: string | null,
): Promise<void> {
  await run(
    q,
    sql`/* setObservationStatus */
     UPDATE observations SET status = ${status}, status_reason = ${reason} WHERE namespace = ${namespace} AND observation_id = ${observationId}`,
  );
  await noteChanges(q, changedIds(namespace, 'OBSERVATION', [observationId]));
}

/** The entity that owns an observation's content chunks: kind `observation`, key = its id. */
export interface ObservationNodeWrite {
  key: string;
  title: string;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  provenance: unknown;
  lastSeen: Date;
}

export async function insertObservationNodes(
  q: Queryable,
  namespace: string,
  nodes: ObservationNodeWrite[],
): Promise<void> {
  if (nodes.length === 0) return;
  await run(
    q,
    sql`/* insertObservationNodes */
     INSERT INTO entities (namespace, key, kind, title, scopes, visibility, source_path, provenance, last_seen)
     SELECT ${namespace}, n.key, 'observation', n.title, coalesce(n.scopes, '{}'), coalesce(n.visibility, '{}'),
            n.source_path, n.provenance, n.last_seen
     FROM jsonb_to_recordset(${JSON.stringify(
       nodes.map((n) => ({
         key: n.key,
         title: n.title,
         scopes: n.scopes,
         visibility: n.visibility,
         source_path: n.sourcePath,
         provenance: n.provenance ?? null,
         last_seen: n.lastSeen.toISOString(),
       })),
     )}::jsonb) AS n(key text, title text, scopes text[], visibility text[],
            source_path text, provenance jsonb, last_seen timestamptz)
     ON CONFLICT (namespace, key) DO NOTHING`,
  );
}

/** A chunk of observation text, for any owner node (many nodes in one statement). */
export interface ObservationChunkWrite {
  nodeKey: string;
  order: number;
  kind: string;
  title: string | null;
  heading: string | null;
  text: string;
  searchText: string;
  /** The writer's own search text when `searchText` carries neighbouring turns (context-index-store). */
  ownSearchText?: string | null;
  sourcePath: string | null;
  meta: Record<string, unknown>;
  scopes: string[];
  visibility: string[];
  observationId: string;
  occurredAt: Date;
  pii: boolean;
  piiCategories: string[];
  embedding: number[] | null;
  /** The text-search configuration the chunk is indexed with (its language). */
  tsConfig: string;
}

/**
 * Inserts the chunks of freshly recorded observations, with their postings, in one multi-row
 * statement (the owners are new, so nothing is replaced).
 */
export async function insertObservationChunks(
  q: Queryable,
  namespace: string,
  chunks: ObservationChunkWrite[],
): Promise<void> {
  if (chunks.length === 0) return;
  const payload = chunks.map((c) => ({
    node_key: c.nodeKey,
    ...chunkRecordOf(c),
    own_search_text: c.ownSearchText ?? null,
  }));
  const ns = param(namespace);
  const context = contextualChunkColumns(ns, 'c');
  await run(
    q,
    sql`/* insertObservationChunks */
     WITH ${windowCte(ns)}, written AS (
       INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, own_search_text, ts_config,
                           source_path, meta, scopes, visibility, observation_id, occurred_at, pii, pii_categories, embedding)
       SELECT ${ns}, c.node_key, c.ord, c.kind, c.title, c.heading, c.text, ${context.searchText}, ${context.ownText},
              c.ts_config::regconfig,
              c.source_path, coalesce(c.meta, '{}'::jsonb), coalesce(c.scopes, '{}'), coalesce(c.visibility, '{}'),
              c.observation_id, c.occurred_at, c.pii, coalesce(c.pii_categories, '{}'), c.embedding::vector
       FROM jsonb_to_recordset(${JSON.stringify(payload)}::jsonb) AS c(node_key text, ord int, kind text, title text, heading text, text text,
              search_text text, own_search_text text, source_path text, meta jsonb, scopes text[], visibility text[], observation_id text,
              occurred_at timestamptz, pii boolean, pii_categories text[], embedding text, ts_config text)
       ${context.joins}
       ON CONFLICT (namespace, node_key, ord) DO NOTHING
       RETURNING ${postedColumns('chunks')}
     ), ${postingsOfInserted('written')}
     SELECT count(*)::int AS n FROM written`,
  );
}

/** What a redaction replaced, described without the content itself. */
export interface RedactedObservation {
  kind: string;
  status: ObservationStatus;
  contentBytes: number;
  dataBytes: number;
  pii: boolean;
  piiCategories: string[];
}

/**
 * Replaces content and data, marks the row REDACTED with the reason, and clears its PII mark
 * (nothing personal is left). Returns the before-state summary, or null when absent.
 */
export async function redactObservationRow(
  q: Queryable,
  namespace: string,
  observationId: string,
  reason: string,
): Promise<RedactedObservation | null> {
  const nsParam = param(namespace);
  const { rows } = await run<RedactedObservation>(
    q,
    sql`/* redactObservationRow */
     WITH before AS (
       SELECT observation_id, kind, status, octet_length(coalesce(content, ''))::int AS "contentBytes",
              coalesce(octet_length(data::text), 0)::int AS "dataBytes", pii, pii_categories
       FROM observations WHERE namespace = ${nsParam} AND observation_id = ${observationId} FOR UPDATE
     )
     UPDATE observations o
     SET content = '[redacted]', data = NULL, status = 'REDACTED', status_reason = ${reason}, pii = false,
         pii_categories = '{}'
     FROM before b
     WHERE o.namespace = ${nsParam} AND o.observation_id = b.observation_id
     RETURNING b.kind, b.status, b."contentBytes", b."dataBytes", b.pii, b.pii_categories AS "piiCategories"`,
  );
  if (rows[0]) await noteChanges(q, changedIds(namespace, 'OBSERVATION', [observationId]));
  return rows[0] ?? null;
}

/**
 * The status of one observation, locked for the rest of the transaction; null when absent or
 * hidden from the caller.
 */
export async function lockObservation(
  q: Queryable,
  namespace: string,
  observationId: string,
  visibleScopes: string[] | null,
): Promise<{ status: ObservationStatus; kind: string } | null> {
  const { rows } = await run<{ status: ObservationStatus; kind: string }>(
    q,
    sql`/* lockObservation */
     SELECT o.status, o.kind FROM observations o
     WHERE o.namespace = ${namespace} AND o.observation_id = ${observationId} AND ${visible('o', visibleScopes)} FOR UPDATE`,
  );
  return rows[0] ?? null;
}

/** Deletes every visible chunk cut from an observation, whoever owns it; returns how many. */
export async function deleteChunksOfObservation(
  q: Queryable,
  namespace: string,
  observationId: string,
  visibleScopes: string[] | null,
): Promise<number> {
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* deleteChunksOfObservation */ ${deleteChunksPosted(
      sql`WHERE c.namespace = ${namespace} AND c.observation_id = ${observationId} AND ${visible('c', visibleScopes)}`,
    )}`,
  );
  return rows[0]?.n ?? 0;
}

/** Replaces every chunk of one node (an episode rewritten by a later observation). */
export async function replaceNodeChunks(
  q: Queryable,
  namespace: string,
  nodeKey: string,
  chunks: ObservationChunkWrite[],
): Promise<void> {
  await deleteChunksOfNode(q, namespace, nodeKey);
  await insertObservationChunks(q, namespace, chunks);
}

/** The end of many observations' processing in one statement (see setObservationStatus). */
export async function setObservationStatuses(
  q: Queryable,
  namespace: string,
  rows: readonly { observationId: string; status: ObservationStatus; reason: string | null }[],
): Promise<void> {
  if (rows.length === 0) return;
  const payload = JSON.stringify(
    rows.map((r) => ({ observation_id: r.observationId, status: r.status, reason: r.reason })),
  );
  await run(
    q,
    sql`/* setObservationStatuses */
     UPDATE observations o SET status = r.status, status_reason = r.reason
     FROM jsonb_to_recordset(${payload}::jsonb) AS r(observation_id text, status text, reason text)
     WHERE o.namespace = ${namespace} AND o.observation_id = r.observation_id`,
  );
  await noteChanges(
    q,
    changedIds(
      namespace,
      'OBSERVATION',
      rows.map((r) => r.observationId),
    ),
  );
}
