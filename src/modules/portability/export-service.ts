import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { Database } from '../../db/database.js';
import {
  DOMAIN_PACK_TYPE,
  EXPORT_TABLES,
  type RecordType,
  type Row,
  advanceIdentity,
  appliedMigrations,
  beginSnapshot,
  countRows,
  insertRows,
  listNamespaces,
  readDomainPacks,
  readRows,
  writableColumns,
} from './store/export-store.js';
import { migrate, readEmbeddingSettings } from '../../kernel/store/migrate.js';

/** The JSON Lines export format (docs/export-format.md): a header, records, an end line. */
export const EXPORT_FORMAT = 'memgate-export';
export const EXPORT_VERSION = 1;

export interface ExportRecord {
  type: RecordType;
  data: Row;
}

const headerSchema = z.object({
  type: z.literal('header'),
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  exportedAt: z.string(),
  embedding: z.object({ model: z.string().min(1), dimensions: z.number().int().positive() }),
  migrations: z.array(z.string()),
  namespaces: z.array(z.string()),
});
export type ExportHeader = z.infer<typeof headerSchema>;

const recordTypes: [RecordType, ...RecordType[]] = [DOMAIN_PACK_TYPE, ...EXPORT_TABLES.map((t) => t.type)];
const recordSchema = z.object({ type: z.enum(recordTypes), data: z.record(z.string(), z.unknown()) });
const endSchema = z.object({ type: z.literal('end'), records: z.number().int().min(0) });

export class ExportFormatError extends Error {}

/** Vectors leave as JSON arrays of numbers, not pgvector's text: readable by anything. */
function portable(type: RecordType, row: Row): Row {
  if (type === 'chunk' && typeof row.embedding === 'string') {
    return { ...row, embedding: JSON.parse(row.embedding) as number[] };
  }
  return row;
}

/** Every record of the namespaces (all when `namespaces` is null), in one consistent snapshot. */
export async function readExport(
  db: Database,
  namespaces: readonly string[] | null,
  sink: (header: ExportHeader, total: number) => Promise<void>,
  onRecord: (record: ExportRecord) => Promise<void> | void,
): Promise<void> {
  const embedding = await readEmbeddingSettings(db);
  if (!embedding) throw new ExportFormatError('This database has no memgate schema yet: nothing to export.');
  await db.transaction('export', async (tx) => {
    await beginSnapshot(tx);
    const selected = namespaces ? [...namespaces] : await listNamespaces(tx);
    const header: ExportHeader = {
      type: 'header',
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      exportedAt: new Date().toISOString(),
      embedding,
      migrations: await appliedMigrations(tx),
      namespaces: selected,
    };
    await sink(header, await countRows(tx, selected));
    for (const row of await readDomainPacks(tx, namespaces))
      await onRecord({ type: DOMAIN_PACK_TYPE, data: row });
    for (const table of EXPORT_TABLES) {
      for await (const rows of readRows(tx, table, selected)) {
        for (const row of rows) await onRecord({ type: table.type, data: portable(table.type, row) });
      }
    }
  });
}

/** Writes the export as JSON Lines to `write` (one call per line, newline included). */
export async function writeExport(
  db: Database,
  namespaces: readonly string[] | null,
  write: (line: string) => Promise<void>,
  onProgress?: (done: number, total: number) => void,
): Promise<{ records: number; namespaces: string[] }> {
  let records = 0;
  let total = 0;
  let selected: string[] = [];
  await readExport(
    db,
    namespaces,
    async (header, count) => {
      total = count;
      selected = header.namespaces;
      await write(`${JSON.stringify(header)}\n`);
    },
    async (record) => {
      records += 1;
      await write(`${JSON.stringify(record)}\n`);
      if (record.type !== DOMAIN_PACK_TYPE) onProgress?.(records, total);
    },
  );
  await write(`${JSON.stringify({ type: 'end', records })}\n`);
  return { records, namespaces: selected };
}

export interface ImportSummary {
  records: number;
  inserted: number;
  existing: number;
  namespaces: string[];
}

/**
 * Loads an export into `db` in one transaction (all of it or nothing). Every row keeps its
 * key and ids, and a row whose key is already there is skipped: importing twice changes nothing.
 */
export async function importExport(
  db: Database,
  input: Readable,
  onProgress?: (bytes: number, summary: ImportSummary) => void,
): Promise<ImportSummary> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })[Symbol.asyncIterator]();
  const first = await lines.next();
  const header = parseLine(first.done ? '' : first.value, 1, headerSchema, 'a memgate export header');
  await migrate(db, header.embedding);
  const summary: ImportSummary = { records: 0, inserted: 0, existing: 0, namespaces: header.namespaces };
  const allowed = new Set(header.namespaces);
  let bytes = Buffer.byteLength(first.value ?? '') + 1;
  let ended = false;
  await db.transaction('import', async (tx) => {
    const columns = new Map<string, string[]>();
    const pending: { type: RecordType | null; rows: Row[] } = { type: null, rows: [] };
    const flush = async () => {
      if (pending.type === null || pending.rows.length === 0) return;
      const table = tableOf(pending.type);
      if (!columns.has(table)) columns.set(table, await writableColumns(tx, table));
      const inserted = await insertRows(tx, table, columns.get(table)!, pending.rows);
      summary.inserted += inserted;
      summary.existing += pending.rows.length - inserted;
      pending.rows = [];
      onProgress?.(bytes, summary);
    };
    let lineNo = 1;
    for (let next = await lines.next(); !next.done; next = await lines.next()) {
      lineNo += 1;
      bytes += Buffer.byteLength(next.value) + 1;
      if (next.value.trim() === '') continue;
      if (ended) throw new ExportFormatError(`line ${lineNo}: content after the end line`);
      const raw = parseJson(next.value, lineNo);
      if ((raw as { type?: unknown }).type === 'end') {
        const end = parseLine(next.value, lineNo, endSchema, 'an end line');
        if (end.records !== summary.records) {
          throw new ExportFormatError(
            `the end line counts ${end.records} records, the file has ${summary.records}`,
          );
        }
        ended = true;
        continue;
      }
      const record = parseLine(next.value, lineNo, recordSchema, 'a record');
      if (record.type !== DOMAIN_PACK_TYPE && !allowed.has(String(record.data.namespace))) {
        throw new ExportFormatError(
          `line ${lineNo}: namespace ${JSON.stringify(record.data.namespace)} is not in the header`,
        );
      }
      summary.records += 1;
      if (pending.type !== record.type) {
        await flush();
        pending.type = record.type;
      }
      pending.rows.push(record.data);
      if (pending.rows.length >= 500) await flush();
    }
    await flush();
    if (!ended) throw new ExportFormatError('the file ends without its end line: it was cut short');
    await advanceIdentity(tx, 'chunks', 'chunk_id');
    await advanceIdentity(tx, 'audit_log', 'audit_id');
  });
  return summary;
}

function tableOf(type: RecordType): string {
  if (type === DOMAIN_PACK_TYPE) return 'domain_packs';
  return EXPORT_TABLES.find((t) => t.type === type)!.table;
}

function parseJson(line: string, lineNo: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new ExportFormatError(`line ${lineNo}: not JSON`);
  }
}

function parseLine<T extends z.ZodType>(line: string, lineNo: number, schema: T, what: string): z.output<T> {
  const parsed = schema.safeParse(parseJson(line, lineNo));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ExportFormatError(
      `line ${lineNo}: not ${what} (${issue?.path.join('.') || 'line'}: ${issue?.message})`,
    );
  }
  return parsed.data;
}

/** Is this line the header of an export (rather than an observation or document to import)? */
export function isExportHeader(line: string): boolean {
  try {
    const value = JSON.parse(line) as { type?: unknown; format?: unknown };
    return value.type === 'header' && value.format === EXPORT_FORMAT;
  } catch {
    return false;
  }
}

/** JSON with object keys sorted at every level: one text per value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const MOD = 1n << 256n;

/**
 * An order-independent digest: the sum (mod 2^256) of each record's SHA-256 and the count,
 * hashed once more. Any row changed, added or lost changes it; the order rows come in does not.
 */
export class Digest {
  private sum = 0n;
  count = 0;

  add(record: ExportRecord): void {
    const h = createHash('sha256').update(canonicalJson(record)).digest('hex');
    this.sum = (this.sum + BigInt(`0x${h}`)) % MOD;
    this.count += 1;
  }

  hex(): string {
    return createHash('sha256')
      .update(`${EXPORT_FORMAT}:${this.count}:${this.sum.toString(16).padStart(64, '0')}`)
      .digest('hex');
  }
}

export interface NamespaceDigest {
  namespace: string;
  records: number;
  digest: string;
}

/**
 * Columns derived from memory by indexing: vectors from the embedder, the contextual search
 * text and its language. `memgate reindex` rebuilds them from the same records, so the digest
 * leaves them out: it says whether two databases hold the same memory.
 */
const DERIVED_COLUMNS: Partial<Record<RecordType, readonly string[]>> = {
  chunk: ['embedding', 'search_text', 'own_search_text', 'ts_config'],
};

/** The record as the digest sees it: without derived columns. */
export function memoryOf(record: ExportRecord): ExportRecord {
  const derived = DERIVED_COLUMNS[record.type];
  if (!derived) return record;
  const data = { ...record.data };
  for (const column of derived) delete data[column];
  return { type: record.type, data };
}

/** The packs line of `checksums`: registered domain packs are shared, not any namespace's own. */
export const PACKS_DIGEST = '(domain packs)';

/**
 * One digest per namespace over what an export of it carries, derived index columns left out;
 * a namespace's digest covers the domain packs it enables. Equal before and after a restore,
 * import, move or reindex.
 */
export async function checksums(
  db: Database,
  namespaces: readonly string[] | null,
  onProgress?: (done: number, total: number) => void,
): Promise<NamespaceDigest[]> {
  const digests = new Map<string, Digest>();
  const packs: ExportRecord[] = [];
  const enabled = new Map<string, Set<string>>();
  let done = 0;
  let total = 0;
  let selected: string[] = [];
  await readExport(
    db,
    namespaces,
    async (header, count) => {
      selected = header.namespaces;
      total = count;
      for (const ns of selected) digests.set(ns, new Digest());
    },
    (record) => {
      if (record.type === DOMAIN_PACK_TYPE) {
        packs.push(record);
        return;
      }
      if (record.type === 'namespace_settings') {
        enabled.set(String(record.data.namespace), new Set(record.data.packs as string[]));
      }
      digests.get(String(record.data.namespace))?.add(memoryOf(record));
      onProgress?.(++done, total);
    },
  );
  const result: NamespaceDigest[] = [];
  for (const ns of selected) {
    const digest = digests.get(ns)!;
    for (const pack of packs) {
      if (enabled.get(ns)?.has(`${pack.data.name}@${pack.data.version}`)) digest.add(pack);
    }
    result.push({ namespace: ns, records: digest.count, digest: digest.hex() });
  }
  if (namespaces === null) {
    const all = new Digest();
    for (const pack of packs) all.add(pack);
    result.push({ namespace: PACKS_DIGEST, records: all.count, digest: all.hex() });
  }
  return result;
}
