import type { Queryable } from '../../../db/database.js';
import { postedColumns, postingsOfInserted } from '../../../kernel/store/postings.js';
import { ident, join, param, raw, run, sql } from '../../../kernel/store/sql.js';

/**
 * The tables a namespace export carries, in the order they are written and read back. Each is
 * exported whole (every column but generated ones), so an import reproduces the rows exactly;
 * chunk postings and lexical statistics are left out because the import's chunk statements
 * write them, as every chunk write does.
 * Names come from this list only, never from input; they enter statements through `ident`.
 */
export const EXPORT_TABLES = [
  { type: 'namespace_settings', table: 'namespace_settings', order: 'namespace' },
  { type: 'entity', table: 'entities', order: 'namespace, key' },
  { type: 'entity_version', table: 'entity_versions', order: 'namespace, key, valid_from' },
  { type: 'observation', table: 'observations', order: 'namespace, observation_id' },
  { type: 'mention', table: 'mentions', order: 'namespace, entity_key, observation_id' },
  { type: 'fact', table: 'facts', order: 'namespace, fact_id' },
  { type: 'chunk', table: 'chunks', order: 'namespace, node_key, ord' },
  { type: 'source_snapshot', table: 'source_snapshots', order: 'namespace, scope, snapshot_id' },
  { type: 'session_compact', table: 'session_compacts', order: 'namespace, session_id' },
  { type: 'context_trace', table: 'context_traces', order: 'namespace, trace_id' },
  { type: 'audit', table: 'audit_log', order: 'namespace, audit_id' },
] as const;

/** Domain packs are shared by namespaces; an export carries the ones its namespaces enable. */
export const DOMAIN_PACK_TYPE = 'domain_pack';

export type ExportTable = (typeof EXPORT_TABLES)[number];
export type RecordType = ExportTable['type'] | typeof DOMAIN_PACK_TYPE;

export type Row = Record<string, unknown>;

/** Reads happen in one REPEATABLE READ snapshot, in UTC, so values print the same everywhere. */
export async function beginSnapshot(q: Queryable): Promise<void> {
  await run(q, sql`/* exportSnapshot */ SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
  await run(q, sql`/* exportTimeZone */ SET LOCAL TimeZone = 'UTC'`);
}

/** The migrations the database has applied, by name (an export's header carries them). */
export async function appliedMigrations(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ name: string }>(
    '/* exportMigrations */ SELECT name FROM schema_migrations ORDER BY name',
  );
  return rows.map((r) => r.name);
}

/** Every namespace that has any exported row. */
export async function listNamespaces(q: Queryable): Promise<string[]> {
  const union = join(
    EXPORT_TABLES.map((t) => sql`SELECT DISTINCT namespace FROM ${ident(t.table)}`),
    ' UNION ',
  );
  const { rows } = await run<{ namespace: string }>(
    q,
    sql`/* exportNamespaces */ SELECT namespace FROM (${union}) n ORDER BY namespace`,
  );
  return rows.map((r) => r.namespace);
}

export async function countRows(q: Queryable, namespaces: readonly string[]): Promise<number> {
  const ns = param(namespaces);
  const sum = join(
    EXPORT_TABLES.map(
      (t) => sql`(SELECT count(*) FROM ${ident(t.table)} WHERE namespace = ANY(${ns}::text[]))`,
    ),
    ' + ',
  );
  const { rows } = await run<{ n: number }>(q, sql`/* exportCount */ SELECT (${sum})::int AS n`);
  return rows[0]?.n ?? 0;
}

/** Generated columns are derived on insert and cannot be written, so they are neither read nor written. */
export async function generatedColumns(q: Queryable, table: string): Promise<string[]> {
  const { rows } = await run<{ name: string }>(
    q,
    sql`/* generatedColumns */ SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ${table} AND is_generated = 'ALWAYS'`,
  );
  return rows.map((r) => r.name);
}

export async function writableColumns(q: Queryable, table: string): Promise<string[]> {
  const { rows } = await run<{ name: string }>(
    q,
    sql`/* writableColumns */ SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ${table} AND is_generated <> 'ALWAYS'
     ORDER BY ordinal_position`,
  );
  return rows.map((r) => r.name);
}

/**
 * Streams a table's rows of the given namespaces in key order, `batch` at a time, through a
 * cursor of the caller's transaction (constant memory on any table size).
 */
export async function* readRows(
  q: Queryable,
  table: ExportTable,
  namespaces: readonly string[],
  batch = 1000,
): AsyncGenerator<Row[]> {
  const skip = await generatedColumns(q, table.table);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`bad batch size ${batch}`);
  await run(
    q,
    sql`/* exportCursor */ DECLARE export_rows NO SCROLL CURSOR FOR
     SELECT to_jsonb(t) - ${skip}::text[] AS row FROM ${ident(table.table)} t
     WHERE t.namespace = ANY(${namespaces}::text[]) ORDER BY ${raw(table.order)}`,
  );
  try {
    for (;;) {
      const { rows } = await run<{ row: Row }>(
        q,
        sql`/* exportFetch */ FETCH ${raw(String(batch))} FROM export_rows`,
      );
      if (rows.length === 0) return;
      yield rows.map((r) => r.row);
    }
  } finally {
    await run(q, sql`/* exportClose */ CLOSE export_rows`);
  }
}

/** The packs (`name@version`) the namespaces enable; every pack when all namespaces are exported. */
export async function readDomainPacks(q: Queryable, namespaces: readonly string[] | null): Promise<Row[]> {
  const ns = param(namespaces);
  const { rows } = await run<{ row: Row }>(
    q,
    sql`/* exportDomainPacks */ SELECT to_jsonb(p) AS row FROM domain_packs p
     WHERE ${ns}::text[] IS NULL OR p.name || '@' || p.version IN (
       SELECT unnest(s.packs) FROM namespace_settings s WHERE s.namespace = ANY(${ns}::text[]))
     ORDER BY p.name, p.version`,
  );
  return rows.map((r) => r.row);
}

/**
 * Inserts rows as they were exported; a row whose key exists is left alone, which makes a
 * second import of the same file a no-op. Chunks are inserted with their BM25 postings, as
 * every chunk write is. Returns how many rows were new.
 */
export async function insertRows(
  q: Queryable,
  table: string,
  columns: readonly string[],
  rows: readonly Row[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const list = join(columns.map(ident), ', ');
  const insert = sql`INSERT INTO ${ident(table)} (${list}) OVERRIDING SYSTEM VALUE
     SELECT ${list} FROM jsonb_populate_recordset(NULL::${ident(table)}, ${JSON.stringify(rows)}::jsonb)
     ON CONFLICT DO NOTHING`;
  if (table !== 'chunks') return (await run(q, sql`/* importRows */ ${insert}`)).rowCount;
  const { rows: written } = await run<{ n: number }>(
    q,
    sql`/* importRows */ WITH written AS (${insert} RETURNING ${postedColumns('chunks')}),
     ${postingsOfInserted('written')}
     SELECT count(*)::int AS n FROM written`,
  );
  return written[0]?.n ?? 0;
}

/** Identity columns continue after the highest imported id, so new rows never collide. */
export async function advanceIdentity(q: Queryable, table: string, column: string): Promise<void> {
  await run(
    q,
    sql`/* advanceIdentity */ SELECT setval(pg_get_serial_sequence(${table}, ${column}), m) FROM (
       SELECT max(${ident(column)}) AS m FROM ${ident(table)}) x WHERE m IS NOT NULL`,
  );
}
