import type { Database, Queryable } from '../../../db/database.js';
import { changedIds, noteChanges } from '../../../kernel/change-notice.js';
import type {
  ObservationChunkWrite,
  ObservationNodeWrite,
  ObservationWrite,
} from '../../../kernel/store/observation-store.js';
import { Mutex } from '../../../db/mutex.js';
import { contextualChunkColumns, windowCte } from '../../../kernel/store/context-index-store.js';
import { postedColumns, postingsOfInserted } from '../../../kernel/store/postings.js';
import { ident, param, raw, run, sql } from '../../../kernel/store/sql.js';

/**
 * The bulk import path: a batch is staged with COPY into temporary tables and moved into the
 * real ones by one set-based statement (observations, their node entities, their chunks; the
 * chunk statement writes the BM25 postings of the whole batch at once, see postings.ts). Rows
 * already recorded are skipped by `ON CONFLICT DO NOTHING`, which is what makes a re-run after
 * a crash resume where it stopped. The HNSW and trigram indexes can be dropped for a large
 * load and built once at the end (`buildVectorIndex`), a build being far cheaper than one
 * insert per row.
 */

export interface BulkObservation {
  row: ObservationWrite;
  node: ObservationNodeWrite | null;
  chunks: ObservationChunkWrite[];
}

const STAGE_OBSERVATIONS = `/* bulkStageObservationsTable */
  CREATE TEMP TABLE bulk_observations (
    observation_id text, source_system text, source_stream text, source_external_id text, kind text,
    occurred_at timestamptz, recorded_at timestamptz, actor_type text, actor_id text, subject_type text,
    subject_id text, scopes text[], visibility text[], content text, data jsonb, provenance jsonb, status text,
    status_reason text, session_id text, pii boolean, pii_categories text[], node_title text,
    node_source_path text
  ) ON COMMIT DROP`;

const STAGE_CHUNKS = `/* bulkStageChunksTable */
  CREATE TEMP TABLE bulk_chunks (
    node_key text, ord int, kind text, title text, heading text, text text, search_text text,
    own_search_text text, ts_config text, source_path text, meta jsonb, scopes text[], visibility text[],
    observation_id text, occurred_at timestamptz, pii boolean, pii_categories text[], seq int
  ) ON COMMIT DROP`;

// Vectors travel in COPY's binary form: PGlite parses vector text at ~0.3 ms a vector.
const STAGE_VECTORS = `/* bulkStageVectorsTable */
  CREATE TEMP TABLE bulk_vectors (seq int, embedding vector) ON COMMIT DROP`;

/**
 * Writes one batch inside the caller's transaction; returns the ids actually inserted (an id
 * missing from the answer was recorded by someone else in the meantime).
 */
export async function insertObservationsBulk(
  tx: Queryable,
  namespace: string,
  batch: BulkObservation[],
): Promise<Set<string>> {
  if (batch.length === 0) return new Set();
  if (!tx.copyFrom) throw new Error('bulk import needs a transaction that supports COPY');
  await tx.query(STAGE_OBSERVATIONS);
  await tx.query(STAGE_CHUNKS);
  await tx.query(STAGE_VECTORS);
  await tx.copyFrom('COPY bulk_observations FROM STDIN', batch.map(observationLine).join(''));
  const chunks = batch.flatMap((b) => b.chunks);
  if (chunks.length > 0) {
    await tx.copyFrom('COPY bulk_chunks FROM STDIN', chunks.map(chunkLine).join(''));
    const vectors = chunks.flatMap((c, seq) => (c.embedding ? [{ seq, embedding: c.embedding }] : []));
    if (vectors.length > 0) {
      await tx.copyFrom('COPY bulk_vectors FROM STDIN WITH (FORMAT binary)', binaryVectors(vectors));
    }
  }
  const nsParam = param(namespace);
  const { rows } = await run<{ id: string }>(
    tx,
    sql`/* bulkInsertObservations */
     WITH inserted AS (
       INSERT INTO observations (namespace, observation_id, source_system, source_stream, source_external_id, kind,
                                 occurred_at, recorded_at, actor_type, actor_id, subject_type, subject_id, scopes,
                                 visibility, content, data, provenance, status, status_reason, session_id, pii,
                                 pii_categories)
       SELECT ${nsParam}, b.observation_id, b.source_system, b.source_stream, b.source_external_id, b.kind, b.occurred_at,
              b.recorded_at, b.actor_type, b.actor_id, b.subject_type, b.subject_id, b.scopes, b.visibility,
              b.content, b.data, b.provenance, b.status, b.status_reason, b.session_id, b.pii, b.pii_categories
       FROM bulk_observations b
       ORDER BY b.ctid -- the file's order, so the arrival sequence keeps it
       ON CONFLICT (namespace, observation_id) DO NOTHING
       RETURNING observation_id
     ),
     nodes AS (
       INSERT INTO entities (namespace, key, kind, title, scopes, visibility, source_path, provenance, last_seen)
       SELECT ${nsParam}, b.observation_id, 'observation', b.node_title, b.scopes, b.visibility, b.node_source_path,
              b.provenance, b.occurred_at
       FROM bulk_observations b JOIN inserted i USING (observation_id)
       WHERE b.node_title IS NOT NULL
       ON CONFLICT (namespace, key) DO NOTHING
     )
     SELECT observation_id AS id FROM inserted`,
  );
  const ids = rows.map((r) => r.id);
  // Their node entities (kind 'observation') are announced as these observations.
  await noteChanges(tx, changedIds(namespace, 'OBSERVATION', ids));
  if (chunks.length > 0 && ids.length > 0) {
    // A statement of its own: the contextual text reads the batch's observations, which a CTE
    // of the statement that inserts them could not see.
    const ns = param(namespace);
    const context = contextualChunkColumns(ns, 'c');
    await run(
      tx,
      sql`/* bulkInsertChunks */
       WITH ${windowCte(ns)}, written AS (
         INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, own_search_text,
                             ts_config, source_path, meta, scopes, visibility, observation_id, occurred_at, pii,
                             pii_categories, embedding)
         SELECT ${ns}, c.node_key, c.ord, c.kind, c.title, c.heading, c.text, ${context.searchText}, ${context.ownText},
                c.ts_config::regconfig,
                c.source_path, c.meta, c.scopes, c.visibility, c.observation_id, c.occurred_at, c.pii,
                c.pii_categories, v.embedding
         FROM bulk_chunks c JOIN unnest(${ids}::text[]) AS i(observation_id) USING (observation_id)
         LEFT JOIN bulk_vectors v USING (seq)
         ${context.joins}
         ON CONFLICT (namespace, node_key, ord) DO NOTHING
         RETURNING ${postedColumns('chunks')}
       ), ${postingsOfInserted('written')}
       SELECT count(*)::int AS n FROM written`,
    );
  }
  return new Set(ids);
}

/** A namespace's planner estimate may trail its real size by this factor before ANALYZE… */
const STALE_FACTOR = 4;
/** …plus this many rows (small namespaces are cheap whatever the plan). */
const STALE_SLACK = 1000;

/** A bulk batch's transaction may run long statements (index maintenance of large batches). */
export async function allowLongImportStatements(q: Queryable): Promise<void> {
  await q.query(`SET LOCAL statement_timeout = '10min'`);
}

/**
 * Refreshes the planner's statistics when the namespace has outgrown them; answers whether it
 * did. A bulk load fills a namespace far faster than autovacuum re-analyzes: with statistics
 * that still say "no rows here" the planner probes a turn's neighbours through the time index
 * and joins entities by nested loop, work that grows with the namespace at every batch (a
 * 1000-row batch at 50k rows took seconds). The check is an estimate against a count bounded by
 * that estimate; ANALYZE reads only the columns the batch's statements filter and join on, and
 * it blocks neither readers nor writers.
 */
export async function refreshStaleStatistics(q: Queryable, namespace: string): Promise<boolean> {
  // Each table is analyzed on its own schedule (autovacuum reaches a small one sooner): the
  // staleness that matters is the worst one.
  let estimate = Number.POSITIVE_INFINITY;
  for (const table of BULK_TABLES) {
    const plan = await run<{ 'QUERY PLAN': unknown }>(
      q,
      sql`/* estimateNamespaceRows */ EXPLAIN (FORMAT JSON) SELECT 1 FROM ${ident(table)} WHERE namespace = ${namespace}`,
    );
    estimate = Math.min(estimate, planRows(plan.rows[0]?.['QUERY PLAN']));
  }
  const bound = Math.ceil(estimate * STALE_FACTOR) + STALE_SLACK;
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* countNamespaceObservationsUpTo */
     SELECT count(*)::int AS n FROM (SELECT 1 FROM observations WHERE namespace = ${namespace} LIMIT ${bound}) x`,
  );
  if ((rows[0]?.n ?? 0) < bound) return false;
  await run(
    q,
    sql`/* analyzeBulkTables */ ANALYZE observations (namespace, session_id, occurred_at, observation_id, status),
       entities (namespace, key, kind), chunks (namespace, node_key, observation_id), mentions (namespace, observation_id)`,
  );
  return true;
}

/** The tables every bulk batch reads by namespace (an observation has a node and a chunk). */
const BULK_TABLES = ['observations', 'chunks', 'entities'] as const;

/** The top node's row estimate of an `EXPLAIN (FORMAT JSON)` answer (0 when unreadable). */
function planRows(explained: unknown): number {
  const json = typeof explained === 'string' ? (JSON.parse(explained) as unknown) : explained;
  const top = Array.isArray(json) ? (json[0] as { Plan?: { 'Plan Rows'?: unknown } } | undefined) : undefined;
  const rows = top?.Plan?.['Plan Rows'];
  return typeof rows === 'number' && Number.isFinite(rows) ? rows : 0;
}

export type VectorIndexState = 'VALID' | 'INVALID' | 'MISSING';

/**
 * The chunk indexes a large load drops and builds once at its end: a graph insert per row into
 * the HNSW index and a trigram GIN insert per row (whose pending list is merged into the tree
 * by the inserting statement) cost 1–3.5 ms a chunk each at size L, a build of either about a
 * tenth of that. Until they are back, vector search and the exact channel run as scans.
 */
const LOAD_INDEXES = [
  { name: 'chunks_embedding_idx', definition: 'ON chunks USING hnsw (embedding vector_cosine_ops)' },
  { name: 'chunks_text_trgm_idx', definition: 'ON chunks USING gin (text gin_trgm_ops)' },
] as const;

type LoadIndex = (typeof LOAD_INDEXES)[number];

const VECTOR_INDEX = LOAD_INDEXES[0];

async function indexState(q: Queryable, index: LoadIndex): Promise<VectorIndexState> {
  const { rows } = await run<{ valid: boolean }>(
    q,
    sql`/* vectorIndexState */
     SELECT i.indisvalid AND i.indisready AS valid FROM pg_index i
     JOIN pg_class c ON c.oid = i.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relname = ${index.name} AND n.nspname = current_schema()`,
  );
  if (rows.length === 0) return 'MISSING';
  return rows[0]!.valid ? 'VALID' : 'INVALID';
}

export async function vectorIndexState(q: Queryable): Promise<VectorIndexState> {
  return indexState(q, VECTOR_INDEX);
}

/** Chunks (all namespaces) the vector index covers or would cover: what a rebuild costs. */
export async function countEmbeddedChunks(q: Queryable): Promise<number> {
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* countEmbeddedChunks */ SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'chunks'`,
  );
  return Math.max(0, rows[0]?.n ?? 0);
}

/**
 * Drops the load indexes (vector and trigram) for a large load. On native PostgreSQL
 * `CONCURRENTLY`, so readers are never blocked; until they are back, vector search and the
 * exact channel run as scans.
 */
export async function dropVectorIndex(db: Database): Promise<void> {
  await maintainingVectorIndex(db, async (q) => {
    for (const index of LOAD_INDEXES) await dropIndexWith(q, db, index);
  });
}

/**
 * Builds each load index that is missing, or rebuilds one an interrupted build left invalid;
 * answers whether it had to. Native PostgreSQL builds `CONCURRENTLY` (reads and writes go on),
 * with the memory a graph build needs and no statement timeout.
 */
export async function ensureVectorIndex(db: Database): Promise<boolean> {
  return maintainingVectorIndex(db, async (q) => {
    let built = false;
    for (const index of LOAD_INDEXES) {
      const state = await indexState(q, index);
      if (state === 'VALID') continue;
      if (state === 'INVALID') await dropIndexWith(q, db, index);
      await buildIndex(q, db, index);
      built = true;
    }
    return built;
  });
}

async function buildIndex(q: Queryable, db: Database, index: LoadIndex): Promise<void> {
  if (db.session) {
    await run(q, sql`SET maintenance_work_mem = '512MB'`);
    await q.query('SET statement_timeout = 0');
    await run(
      q,
      sql`/* buildVectorIndex */ CREATE INDEX CONCURRENTLY IF NOT EXISTS ${raw(index.name)} ${raw(index.definition)}`,
    );
    return;
  }
  await db.transaction('buildVectorIndex', async (tx) => {
    await run(tx, sql`SET LOCAL maintenance_work_mem = '512MB'`);
    await run(
      tx,
      sql`/* buildVectorIndex */ CREATE INDEX IF NOT EXISTS ${raw(index.name)} ${raw(index.definition)}`,
    );
  });
}

async function dropIndexWith(q: Queryable, db: Database, index: LoadIndex): Promise<void> {
  const concurrently = db.backend === 'postgres' ? 'CONCURRENTLY ' : '';
  await run(q, sql`/* dropVectorIndex */ DROP INDEX ${raw(concurrently)}IF EXISTS ${raw(index.name)}`);
}

const maintenanceQueues = new WeakMap<Database, Mutex>();
/** Any 64-bit key of its own: the advisory lock every gateway on the database takes to touch the index. */
const VECTOR_INDEX_LOCK = 7_286_031_554_119_210_683n;
const LOCK_POLL_MS = 100;

/**
 * One drop or build of the vector index at a time. Interleaved, they fail in the database: a
 * concurrent build shows the index as invalid to a second caller, whose drop then cancels the
 * build, and two concurrent drops or builds deadlock. Callers in this process queue on a mutex;
 * other gateways on the same native database are held off by a session advisory lock, polled
 * rather than waited for, because a session blocked on the lock would hold a snapshot that
 * `CREATE INDEX CONCURRENTLY` waits out: the build and the waiter would wait on each other.
 */
async function maintainingVectorIndex<T>(db: Database, fn: (q: Queryable) => Promise<T>): Promise<T> {
  const queue = maintenanceQueues.get(db) ?? new Mutex();
  maintenanceQueues.set(db, queue);
  return queue.run(() => {
    if (!db.session) return fn(db);
    return db.session(async (q) => {
      while (!(await tryIndexLock(q))) await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      try {
        return await fn(q);
      } finally {
        await run(
          q,
          sql`/* unlockVectorIndex */ SELECT pg_advisory_unlock(${VECTOR_INDEX_LOCK.toString()}::bigint)`,
        );
      }
    });
  });
}

async function tryIndexLock(q: Queryable): Promise<boolean> {
  const { rows } = await run<{ locked: boolean }>(
    q,
    sql`/* lockVectorIndex */ SELECT pg_try_advisory_lock(${VECTOR_INDEX_LOCK.toString()}::bigint) AS locked`,
  );
  return rows[0]?.locked === true;
}

// COPY text format: tab-separated, \N for NULL, backslash escapes for the separators.
const NULL = '\\N';

function copyText(value: string | null | undefined): string {
  if (value === null || value === undefined) return NULL;
  return value.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

function copyArray(values: readonly string[] | null | undefined): string {
  const items = (values ?? []).map((v) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`);
  return copyText(`{${items.join(',')}}`);
}

function copyJson(value: unknown): string {
  return value === null || value === undefined ? NULL : copyText(JSON.stringify(value));
}

function copyBool(value: boolean): string {
  return value ? 't' : 'f';
}

function observationLine({ row: r, node }: BulkObservation): string {
  return `${[
    copyText(r.observationId),
    copyText(r.sourceSystem),
    copyText(r.sourceStream),
    copyText(r.sourceExternalId),
    copyText(r.kind),
    r.occurredAt.toISOString(),
    r.recordedAt.toISOString(),
    copyText(r.actorType),
    copyText(r.actorId),
    copyText(r.subjectType),
    copyText(r.subjectId),
    copyArray(r.scopes),
    copyArray(r.visibility),
    copyText(r.content),
    copyJson(r.data),
    copyJson(r.provenance),
    copyText(r.status),
    copyText(r.statusReason),
    copyText(r.sessionId),
    copyBool(r.pii),
    copyArray(r.piiCategories),
    copyText(node?.title ?? null),
    copyText(node?.sourcePath ?? null),
  ].join('\t')}\n`;
}

function chunkLine(c: ObservationChunkWrite, seq: number): string {
  return `${[
    copyText(c.nodeKey),
    String(c.order),
    copyText(c.kind),
    copyText(c.title),
    copyText(c.heading),
    copyText(c.text),
    copyText(c.searchText),
    copyText(c.ownSearchText ?? null),
    copyText(c.tsConfig),
    copyText(c.sourcePath),
    copyJson(c.meta ?? {}),
    copyArray(c.scopes),
    copyArray(c.visibility),
    copyText(c.observationId),
    c.occurredAt.toISOString(),
    copyBool(c.pii),
    copyArray(c.piiCategories),
    String(seq),
  ].join('\t')}\n`;
}

/** Binary COPY of (seq int4, embedding vector); pgvector's binary form is dim, 0, float4s. */
function binaryVectors(rows: { seq: number; embedding: number[] }[]): Uint8Array {
  const dim = rows[0]!.embedding.length;
  const out = Buffer.alloc(19 + rows.length * (2 + 8 + 4 + 4 + dim * 4) + 2);
  out.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
  out.writeInt32BE(0, 11); // flags
  out.writeInt32BE(0, 15); // header extension length
  let o = 19;
  for (const { seq, embedding } of rows) {
    o = out.writeInt16BE(2, o);
    o = out.writeInt32BE(4, o);
    o = out.writeInt32BE(seq, o);
    o = out.writeInt32BE(4 + dim * 4, o);
    o = out.writeInt16BE(dim, o);
    o = out.writeInt16BE(0, o);
    for (const x of embedding) o = out.writeFloatBE(x, o);
  }
  out.writeInt16BE(-1, o);
  return out;
}

/**
 * Opens the namespace's bulk import (or keeps the one already open, with its earlier start):
 * turns that arrive from now on are re-indexed in context by `finishImport`.
 */
export async function openBulkImport(q: Queryable, namespace: string): Promise<void> {
  await run(
    q,
    sql`/* openBulkImport */
     INSERT INTO bulk_imports AS b (namespace, from_arrival)
     SELECT ${namespace}, last_value FROM observation_arrival_seq
     ON CONFLICT (namespace) DO UPDATE SET from_arrival = least(b.from_arrival, excluded.from_arrival)`,
  );
}

/** Where the namespace's open bulk import began in the arrival sequence; null when none is open. */
export async function openBulkImportFrom(q: Queryable, namespace: string): Promise<bigint | null> {
  const { rows } = await run<{ from: string }>(
    q,
    sql`/* openBulkImportFrom */ SELECT from_arrival::text AS "from" FROM bulk_imports WHERE namespace = ${namespace}`,
  );
  return rows[0] ? BigInt(rows[0].from) : null;
}

export async function closeBulkImport(q: Queryable, namespace: string, from: bigint): Promise<void> {
  // Only the import this finish read: one opened earlier meanwhile keeps its own start.
  await run(
    q,
    sql`/* closeBulkImport */ DELETE FROM bulk_imports WHERE namespace = ${namespace} AND from_arrival = ${from.toString()}::bigint`,
  );
}

/**
 * One page of the turns (observations in a session) that arrived in the namespace since
 * `from`, in session order so a page's neighbourhoods overlap; `after` is the last key of the
 * previous page.
 */
export async function turnsArrivedSince(
  q: Queryable,
  namespace: string,
  from: bigint,
  after: TurnKey | null,
  limit: number,
): Promise<TurnKey[]> {
  const { rows } = await run<TurnKey>(
    q,
    sql`/* turnsArrivedSince */
     SELECT o.observation_id AS id, o.session_id AS "sessionId", o.occurred_at AS "occurredAt", o.arrival::text AS arrival
     FROM observations o
     WHERE o.namespace = ${namespace} AND o.session_id IS NOT NULL AND o.arrival > ${from.toString()}::bigint
       AND (${after?.sessionId ?? null}::text IS NULL
            OR (o.session_id, o.occurred_at, o.arrival)
               > (${after?.sessionId ?? null}::text, ${after?.occurredAt ?? null}::timestamptz, ${after?.arrival ?? null}::bigint))
     ORDER BY o.session_id, o.occurred_at, o.arrival
     LIMIT ${limit}`,
  );
  return rows;
}

export interface TurnKey {
  id: string;
  sessionId: string;
  occurredAt: Date;
  arrival: string;
}
