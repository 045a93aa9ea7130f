/**
 * Bulk SQL loading of the generated dataset (GraphQL ingest is measured separately, on a small
 * share): multi-array `INSERT … SELECT FROM unnest(…)` in batches, with the secondary indexes
 * dropped during the load and rebuilt afterwards (a sorted build is far cheaper than 100k
 * incremental inserts, HNSW above all). Chunks are inserted with the gateway's own postings
 * CTEs, so BM25 postings and statistics are built by the same code as in production. On PGlite vectors go through a binary COPY into a staging
 * table: parsing vector text costs ~0.15–0.6 ms a vector there, binary input almost nothing.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { Database } from '../src/db/database.js';
import type { Embedder } from '../src/providers/embedder.js';
import type { ChunkGen, Dataset } from './generate.js';
import { postedChunkInsert } from './postings-sql.js';

export interface Phase {
  name: string;
  ms: number;
  /**
   * CPU time of this process during the phase. With PGlite the database runs in-process, so
   * on a shared machine this is what the phase would take alone; wall time includes waiting.
   */
  cpuMs?: number;
  rows?: number;
}

/** Runs `fn` and appends its wall and CPU time to `phases`; logs phases slower than 2 s. */
async function phase<T>(
  phases: Phase[],
  name: string,
  log: Log,
  fn: () => Promise<T>,
  rows?: (value: T) => number | undefined,
): Promise<T> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const n = rows?.(value);
  phases.push({ name, ms, cpuMs: (used.user + used.system) / 1000, ...(n === undefined ? {} : { rows: n }) });
  if (ms > 2_000 || n !== undefined) {
    log(
      `  ${name}: ${n === undefined ? '' : `${n} rows, `}${(ms / 1000).toFixed(1)} s (CPU ${((used.user + used.system) / 1e6).toFixed(1)} s)`,
    );
  }
  return value;
}

export interface LoadReport {
  phases: Phase[];
  totalMs: number;
  rows: Record<string, number>;
}

type Log = (msg: string) => void;
type Column = [name: string, sqlType: string, value: (row: never) => unknown];

const BATCH = 5_000;
const LOADED_TABLES = ['entities', 'entity_versions', 'observations', 'mentions', 'facts', 'chunks'];
/**
 * Tables whose primary key is rebuilt after the load instead of maintained row by row: the
 * biggest ones, keyed by a hash (fact ids) or by lexeme (postings, filled by the chunk
 * inserts), where incremental inserts land all over the b-tree. Nothing upserts into them.
 */
const REKEYED_TABLES = ['facts', 'chunk_postings'];

/** `{"a","b"}`: a text[] literal, passed as one text element and cast per row. */
export function pgTextArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const json = (v: unknown) => (v == null ? null : JSON.stringify(v));

async function insertBatch(
  db: Database,
  table: string,
  columns: Column[],
  rows: unknown[],
  extra: { names: string[]; values: string[] } = { names: [], values: [] },
): Promise<void> {
  const params = columns.map(([, , value]) => rows.map((r) => value(r as never)));
  const args = columns.map(([, type], i) => `$${i + 1}::${arrayParamType(type)}[]`);
  // Columns named `_x` only travel in the unnest (join keys), they are not inserted.
  const inserted = columns.filter(([name]) => !name.startsWith('_'));
  const selects = inserted.map(([name, type]) => `u.${name}::${type}`);
  const insert = `INSERT INTO ${table} (${[...inserted.map(([n]) => n), ...extra.names].join(', ')})
     SELECT ${[...selects, ...extra.values].join(', ')}
     FROM unnest(${args.join(', ')}) AS u(${columns.map(([n]) => n).join(', ')})`;
  // Chunks carry their postings, as the gateway's chunk statements write them.
  await db.query(
    table === 'chunks'
      ? `/* benchBulkInsert */ WITH ${postedChunkInsert('written', insert)} SELECT count(*) FROM written`
      : `/* benchBulkInsert */ ${insert}`,
    params,
  );
}

/** Element types for the unnest arrays: arrays-of-arrays and json travel as text, cast per row. */
function arrayParamType(type: string): string {
  if (type.endsWith('[]') || type === 'jsonb' || type === 'regconfig' || type.startsWith('vector'))
    return 'text';
  return type;
}

async function insertAll<T>(
  db: Database,
  table: string,
  columns: Column[],
  rows: Iterable<T>,
  log: Log,
  extra?: { names: string[]; values: string[] },
): Promise<number> {
  let batch: T[] = [];
  let count = 0;
  for (const row of rows) {
    batch.push(row);
    if (batch.length === BATCH) {
      await insertBatch(db, table, columns, batch, extra);
      count += batch.length;
      batch = [];
      if (count % (BATCH * 10) === 0) log(`  ${table}: ${count}`);
    }
  }
  if (batch.length) await insertBatch(db, table, columns, batch, extra);
  return count + batch.length;
}

interface SavedIndex {
  name: string;
  table: string;
  def: string;
}

/** Secondary indexes that no constraint needs (primary and unique keys stay). */
export async function dropSecondaryIndexes(db: Database, tables: string[]): Promise<SavedIndex[]> {
  const { rows } = await db.query<SavedIndex>(
    `/* benchListIndexes */
     SELECT ic.relname AS name, c.relname AS "table", pg_get_indexdef(i.indexrelid) AS def
     FROM pg_index i
     JOIN pg_class c ON c.oid = i.indrelid
     JOIN pg_class ic ON ic.oid = i.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[])
       AND NOT i.indisprimary AND NOT i.indisunique
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
     ORDER BY c.relname, ic.relname`,
    [tables],
  );
  for (const r of rows) await db.exec(`DROP INDEX IF EXISTS "${r.name}"`);
  return rows;
}

interface SavedKey {
  name: string;
  table: string;
  def: string;
}

async function dropPrimaryKeys(db: Database, tables: string[]): Promise<SavedKey[]> {
  const { rows } = await db.query<SavedKey>(
    `/* benchListPrimaryKeys */
     SELECT k.conname AS name, c.relname AS "table", pg_get_constraintdef(k.oid) AS def
     FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND k.contype = 'p' AND c.relname = ANY($1::text[])`,
    [tables],
  );
  for (const r of rows) await db.exec(`ALTER TABLE "${r.table}" DROP CONSTRAINT "${r.name}"`);
  return rows;
}

async function restorePrimaryKeys(db: Database, saved: SavedKey[], phases: Phase[], log: Log): Promise<void> {
  for (const key of saved) {
    await phase(phases, `primary key ${key.table}`, log, () =>
      db.transaction('benchRestorePrimaryKey', async (tx) => {
        await tx.query(`SET LOCAL maintenance_work_mem = '512MB'`);
        await tx.query(`ALTER TABLE "${key.table}" ADD CONSTRAINT "${key.name}" ${key.def}`);
      }),
    );
  }
}

async function rebuildIndexes(db: Database, saved: SavedIndex[], phases: Phase[], log: Log): Promise<void> {
  // Vector indexes last: they are the slowest and benefit from everything else being done.
  const ordered = [...saved].sort(
    (a, b) => Number(/using (hnsw|ivfflat)/i.test(a.def)) - Number(/using (hnsw|ivfflat)/i.test(b.def)),
  );
  for (const index of ordered) {
    await phase(phases, `index ${index.name}`, log, () =>
      db.transaction('benchBuildIndex', async (tx) => {
        await tx.query(`SET LOCAL maintenance_work_mem = '512MB'`);
        await tx.query(index.def);
      }),
    );
  }
}

const entityColumns: Column[] = [
  ['namespace', 'text', (r: { ns: string }) => r.ns],
  ['key', 'text', (r: { key: string }) => r.key],
  ['kind', 'text', (r: { kind: string }) => r.kind],
  ['title', 'text', (r: { title: string }) => r.title],
  ['attributes', 'jsonb', (r: { attributes: unknown }) => json(r.attributes)],
  ['scopes', 'text[]', (r: { scopes: string[] }) => pgTextArray(r.scopes)],
  ['source_path', 'text', (r: { sourcePath: string | null }) => r.sourcePath],
  ['content', 'text', (r: { content: string | null }) => r.content],
  ['provenance', 'jsonb', (r: { provenance: unknown }) => json(r.provenance)],
  ['last_seen', 'timestamptz', (r: { createdAt: Date }) => iso(r.createdAt)],
  ['created_at', 'timestamptz', (r: { createdAt: Date }) => iso(r.createdAt)],
];

export async function loadDataset(
  db: Database & { pglite?: PGlite },
  ds: Dataset,
  embedder: Embedder,
  log: Log,
): Promise<LoadReport> {
  const phases: Phase[] = [];
  const rows: Record<string, number> = {};
  const started = performance.now();
  const timed = async (name: string, fn: () => Promise<number>) => {
    rows[name] = await phase(phases, name, log, fn, (n) => n);
  };
  const ns = ds.namespace;
  const hasMeta = await columnExists(db, 'entities', 'meta');

  const saved = await dropSecondaryIndexes(db, LOADED_TABLES);
  const keys = await dropPrimaryKeys(db, REKEYED_TABLES);
  phases.push({
    name: 'drop secondary indexes and big primary keys',
    ms: 0,
    rows: saved.length + keys.length,
  });

  await timed('entities', () =>
    insertAll(
      db,
      'entities',
      hasMeta
        ? [...entityColumns, ['meta', 'jsonb', (r: { meta: unknown }) => json(r.meta)] as Column]
        : entityColumns,
      mapRows(ds.entityRows(), (e) => ({ ...e, ns })),
      log,
    ),
  );
  await timed('entity_versions', () =>
    insertAll(
      db,
      'entity_versions',
      [
        ['namespace', 'text', () => ns],
        ['key', 'text', (r: { key: string }) => r.key],
        ['valid_from', 'timestamptz', (r: { validFrom: Date }) => iso(r.validFrom)],
        ['valid_to', 'timestamptz', (r: { validTo: Date | null }) => iso(r.validTo)],
        ['title', 'text', (r: { title: string }) => r.title],
        ['attributes', 'jsonb', (r: { attributes: unknown }) => json(r.attributes)],
      ],
      ds.entityVersionRows(),
      log,
    ),
  );
  await timed('observations', () =>
    insertAll(
      db,
      'observations',
      [
        ['namespace', 'text', () => ns],
        ['observation_id', 'text', (r: { observationId: string }) => r.observationId],
        ['source_system', 'text', () => 'bench'],
        ['source_stream', 'text', (r: { stream: string }) => r.stream],
        ['source_external_id', 'text', (r: { externalId: string }) => r.externalId],
        ['kind', 'text', (r: { kind: string }) => r.kind],
        ['occurred_at', 'timestamptz', (r: { occurredAt: Date }) => iso(r.occurredAt)],
        ['recorded_at', 'timestamptz', (r: { recordedAt: Date }) => iso(r.recordedAt)],
        ['actor_type', 'text', () => 'person'],
        ['actor_id', 'text', (r: { actorKey: string }) => r.actorKey],
        ['content', 'text', (r: { content: string }) => r.content],
        ['status', 'text', () => 'PROCESSED'],
        ['session_id', 'text', (r: { sessionId: string }) => r.sessionId],
      ],
      ds.observationRows(),
      log,
    ),
  );
  await timed('mentions', () =>
    insertAll(
      db,
      'mentions',
      [
        ['namespace', 'text', () => ns],
        ['entity_key', 'text', (r: { entityKey: string }) => r.entityKey],
        ['observation_id', 'text', (r: { observationId: string }) => r.observationId],
        ['role', 'text', (r: { role: string }) => r.role],
      ],
      ds.mentionRows(),
      log,
    ),
  );
  await timed('facts', () =>
    insertAll(
      db,
      'facts',
      [
        ['namespace', 'text', () => ns],
        ['fact_id', 'text', (r: { factId: string }) => r.factId],
        ['subject', 'text', (r: { subject: string }) => r.subject],
        ['predicate', 'text', (r: { predicate: string }) => r.predicate],
        ['object', 'text', (r: { object: string }) => r.object],
        ['valid_from', 'timestamptz', (r: { validFrom: Date }) => iso(r.validFrom)],
        ['valid_to', 'timestamptz', (r: { validTo: Date | null }) => iso(r.validTo)],
        ['recorded_at', 'timestamptz', (r: { recordedAt: Date }) => iso(r.recordedAt)],
        ['evidence', 'text', (r: { evidence: string }) => r.evidence],
        ['confidence', 'real', (r: { confidence: number }) => r.confidence],
        ['status', 'text', (r: { status: string }) => r.status],
        ['conflict', 'boolean', (r: { conflict: boolean }) => r.conflict],
        ['conflicts_with', 'text[]', (r: { conflictsWith: string[] }) => pgTextArray(r.conflictsWith)],
        ['supersedes', 'text', (r: { supersedes: string | null }) => r.supersedes],
        ['superseded_by', 'text', (r: { supersededBy: string | null }) => r.supersededBy],
        ['observation_ids', 'text[]', (r: { observationIds: string[] }) => pgTextArray(r.observationIds)],
      ],
      ds.factRows(),
      log,
    ),
  );

  let embedMs = 0;
  await timed('chunks', async () => {
    await db.exec(
      `DROP TABLE IF EXISTS bench_stage_vectors; CREATE TABLE bench_stage_vectors (seq integer PRIMARY KEY, embedding vector(${embedder.dimensions}))`,
    );
    let count = 0;
    const flush = async (batch: ChunkGen[]) => {
      const t = performance.now();
      const vectors = await embedder.embed(batch.map((c) => c.embeddingText));
      embedMs += performance.now() - t;
      await stageVectors(db, vectors);
      await insertBatch(db, 'chunks', chunkColumns(ns), batch, {
        names: ['embedding'],
        values: ['(SELECT v.embedding FROM bench_stage_vectors v WHERE v.seq = u._seq)'],
      });
      await db.exec('TRUNCATE bench_stage_vectors');
      count += batch.length;
      if (count % (BATCH * 4) === 0) log(`  chunks: ${count}`);
    };
    let batch: ChunkGen[] = [];
    for (const source of [ds.chunkRows(), ds.observationChunkRows()]) {
      for (const chunk of source) {
        batch.push(chunk);
        if (batch.length === BATCH) {
          await flush(batch);
          batch = [];
        }
      }
    }
    if (batch.length) await flush(batch);
    await db.exec('DROP TABLE IF EXISTS bench_stage_vectors');
    return count;
  });
  phases.push({ name: 'embedding (offline, part of chunks)', ms: embedMs });

  await restorePrimaryKeys(db, keys, phases, log);
  await rebuildIndexes(db, saved, phases, log);
  await phase(phases, 'vacuum analyze', log, () => db.exec('VACUUM ANALYZE'));
  return { phases, totalMs: performance.now() - started, rows };

  async function stageVectors(target: Database & { pglite?: PGlite }, vectors: number[][]): Promise<void> {
    if (target.pglite) {
      await target.pglite.query(`COPY bench_stage_vectors FROM '/dev/blob' WITH (FORMAT binary)`, [], {
        blob: new Blob([new Uint8Array(binaryVectorCopy(vectors))]),
      });
      return;
    }
    await target.query(
      `/* benchStageVectors */ INSERT INTO bench_stage_vectors (seq, embedding)
       SELECT s, v::vector FROM unnest($1::int[], $2::text[]) AS u(s, v)`,
      [vectors.map((_, i) => i), vectors.map((v) => `[${v.join(',')}]`)],
    );
  }
}

function chunkColumns(ns: string): Column[] {
  let seq = 0;
  return [
    ['namespace', 'text', () => ns],
    ['node_key', 'text', (r: ChunkGen) => r.nodeKey],
    ['ord', 'integer', (r: ChunkGen) => r.order],
    ['kind', 'text', (r: ChunkGen) => r.kind],
    ['title', 'text', (r: ChunkGen) => r.title],
    ['heading', 'text', (r: ChunkGen) => r.heading],
    ['text', 'text', (r: ChunkGen) => r.text],
    ['search_text', 'text', (r: ChunkGen) => r.searchText],
    ['source_path', 'text', (r: ChunkGen) => r.sourcePath],
    ['meta', 'jsonb', (r: ChunkGen) => json(r.meta)],
    ['scopes', 'text[]', (r: ChunkGen) => pgTextArray(r.scopes)],
    ['observation_id', 'text', (r: ChunkGen) => r.observationId],
    ['occurred_at', 'timestamptz', (r: ChunkGen) => iso(r.occurredAt)],
    // The batch position, to join the staged vector; not a chunks column.
    ['_seq', 'integer', () => seq++],
  ].map((c) => c as Column);
}

/** PostgreSQL binary COPY of (seq int4, embedding vector): pgvector's binary form is dim, 0, float4s. */
export function binaryVectorCopy(vectors: number[][]): Buffer {
  const dim = vectors[0]?.length ?? 0;
  const rowBytes = 2 + 4 + 4 + 4 + 4 + dim * 4;
  const out = Buffer.alloc(19 + vectors.length * rowBytes + 2);
  out.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
  out.writeInt32BE(0, 11);
  out.writeInt32BE(0, 15);
  let o = 19;
  vectors.forEach((v, i) => {
    o = out.writeInt16BE(2, o);
    o = out.writeInt32BE(4, o);
    o = out.writeInt32BE(i, o);
    o = out.writeInt32BE(4 + dim * 4, o);
    o = out.writeInt16BE(dim, o);
    o = out.writeInt16BE(0, o);
    for (const x of v) o = out.writeFloatBE(x, o);
  });
  out.writeInt16BE(-1, o);
  return out;
}

async function columnExists(db: Database, table: string, column: string): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>(
    `/* benchColumnExists */ SELECT EXISTS (
       SELECT 1 FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2) AS present`,
    [table, column],
  );
  return rows[0]?.present ?? false;
}

function* mapRows<T, U>(rows: Iterable<T>, fn: (row: T) => U): Generator<U> {
  for (const row of rows) yield fn(row);
}
