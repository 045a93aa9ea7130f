import { createInterface } from 'node:readline';
import { parseDateTime } from '../../domain/temporal.js';
import type { WritePayload, WriteStatus } from '../../kernel/batch.js';
import type { ImportFinish, ImportPlan } from './bulk-import-service.js';
import { DOCUMENT_LIMITS } from '../documents/index.js';

/**
 * `memgate import`: JSON Lines of ObservationInput or DocumentInput, streamed in batches
 * through the same services the GraphQL mutations use (same validation, same per-item
 * results). A line is a document when it has `key`, `title` and `content` and no `source`.
 * Within one batch observations are written before documents, so a document's links can
 * reach entities the batch's observations created.
 */

export interface ImportSummary {
  /** Non-empty lines read. */
  lines: number;
  observations: number;
  documents: number;
  /** CREATED, UPDATED, REINFORCED. */
  accepted: number;
  /** PARTIAL: stored, with some of its assertions rejected. */
  partial: number;
  /** DUPLICATE and UNCHANGED: already known, nothing changed. */
  duplicate: number;
  rejected: number;
  statuses: Partial<Record<WriteStatus, number>>;
  /** The first rejections by line number, as `line N: CODE message`. */
  reasons: string[];
  /** Bytes of input consumed (for progress against a file size). */
  bytes: number;
  ms: number;
  /** Bulk imports: what was done with the vector index, and how long its build took. */
  vectorIndex?: { plan: ImportPlan['vectorIndex']; finish: ImportFinish['vectorIndex']; ms: number };
}

export interface ImportOptions {
  namespace: string;
  /** Lines per batch (one service call per kind per batch); default 500. */
  batchSize?: number;
  maxReasons?: number;
  onProgress?: (summary: ImportSummary) => void;
  /**
   * The bulk path: observations go through importObservations (COPY, set-based), framed by
   * beginImport / finishImport; `expectedLines` sizes the decision about the vector index.
   */
  bulk?: { expectedLines: number; vectorIndex?: ImportPlan['vectorIndex']; onIndexBuild?: () => void };
}

export const DEFAULT_IMPORT_BATCH = 500;
/** As large as a GraphQL list may be by default, so `--url` sends the same batches. */
export const DEFAULT_BULK_BATCH = 1000;
/** Documents go to the embedder in one call per request: keep requests to a sane size. */
const MAX_DOCUMENT_BATCH_BYTES = 8 * 1024 * 1024;

type ParsedLine =
  | { type: 'observation'; value: Record<string, unknown> }
  | { type: 'document'; value: Record<string, unknown> }
  | { type: 'error'; code: string; message: string };

interface Entry {
  line: number;
  type: 'observation' | 'document';
  value: Record<string, unknown>;
}

/**
 * Where batches go: the services in this process, or a running gateway's API (`--url`), which
 * is how to import while a server holds the embedded database.
 */
export interface ImportWriter {
  recordObservations(namespace: string, values: Record<string, unknown>[]): Promise<WritePayload>;
  retainDocuments(namespace: string, values: Record<string, unknown>[]): Promise<WritePayload>;
  importObservations(namespace: string, values: Record<string, unknown>[]): Promise<WritePayload>;
  beginImport(
    namespace: string,
    expectedObservations: number,
    vectorIndex?: ImportPlan['vectorIndex'],
  ): Promise<ImportPlan>;
  finishImport(namespace: string): Promise<ImportFinish>;
}

export async function importJsonlWith(
  writer: ImportWriter,
  input: NodeJS.ReadableStream,
  options: ImportOptions,
): Promise<ImportSummary> {
  const started = performance.now();
  const bulk = options.bulk;
  const batchSize = options.batchSize ?? (bulk ? DEFAULT_BULK_BATCH : DEFAULT_IMPORT_BATCH);
  const plan = bulk
    ? await writer.beginImport(options.namespace, bulk.expectedLines, bulk.vectorIndex)
    : null;
  const tally = new ImportTally(options.maxReasons ?? 5);
  const summary = tally.summary;
  const flush = async (entries: Entry[]) => {
    if (entries.length === 0) return;
    await writeEntries(writer, options, entries, tally);
    summary.ms = performance.now() - started;
    options.onProgress?.(summary);
  };
  let batch: Entry[] = [];
  for await (const entry of readEntries(input, tally)) {
    batch.push(entry);
    if (batch.length < batchSize) continue;
    const full = batch;
    batch = [];
    await flush(full);
  }
  await flush(batch);
  if (plan) {
    bulk?.onIndexBuild?.();
    const finish = await writer.finishImport(options.namespace);
    summary.vectorIndex = { plan: plan.vectorIndex, finish: finish.vectorIndex, ms: finish.ms };
  }
  summary.ms = performance.now() - started;
  return summary;
}

/**
 * The summary of an import so far. Lines that fail to parse are counted at once, the others
 * when their batch is written (observations before documents), so rejections arrive out of
 * line order: the lowest-numbered ones are kept, sorted.
 */
class ImportTally {
  readonly summary: ImportSummary = {
    lines: 0,
    observations: 0,
    documents: 0,
    accepted: 0,
    partial: 0,
    duplicate: 0,
    rejected: 0,
    statuses: {},
    reasons: [],
    bytes: 0,
    ms: 0,
  };
  private readonly firstRejections: { line: number; text: string }[] = [];

  constructor(private readonly maxReasons: number) {}

  count(line: number, status: WriteStatus, code?: string | null, message?: string | null): void {
    const summary = this.summary;
    summary.statuses[status] = (summary.statuses[status] ?? 0) + 1;
    if (status === 'REJECTED') {
      summary.rejected++;
      this.keepReason(line, `line ${line}: ${code ?? 'REJECTED'} ${truncate(message ?? '', 300)}`.trim());
    } else if (status === 'PARTIAL') summary.partial++;
    else if (status === 'DUPLICATE' || status === 'UNCHANGED') summary.duplicate++;
    else summary.accepted++;
  }

  /** Counts a written batch's results, each against its line. */
  apply(entries: readonly Entry[], payload: WritePayload): void {
    for (const r of payload.results) {
      const entry = entries[r.index];
      if (entry) this.count(entry.line, r.status, r.code, r.message);
    }
  }

  private keepReason(line: number, text: string): void {
    const rejections = this.firstRejections;
    const at = rejections.findIndex((r) => r.line > line);
    rejections.splice(at < 0 ? rejections.length : at, 0, { line, text });
    if (rejections.length > this.maxReasons) rejections.pop();
    this.summary.reasons = rejections.map((r) => r.text);
  }
}

/** The input's lines as entries: blank ones skipped, unparsable ones counted REJECTED at once. */
async function* readEntries(input: NodeJS.ReadableStream, tally: ImportTally): AsyncGenerator<Entry> {
  const summary = tally.summary;
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  for await (const text of reader) {
    lineNo++;
    summary.bytes += Buffer.byteLength(text, 'utf8') + 1;
    if (text.trim() === '') continue;
    summary.lines++;
    const parsed = parseImportLine(text);
    if (parsed.type === 'error') {
      tally.count(lineNo, 'REJECTED', parsed.code, parsed.message);
      continue;
    }
    if (parsed.type === 'observation') summary.observations++;
    else summary.documents++;
    yield { line: lineNo, type: parsed.type, value: parsed.value };
  }
}

/** One batch: its observations in one call, then its documents in groups; a failure stops the import. */
async function writeEntries(
  writer: ImportWriter,
  options: ImportOptions,
  entries: Entry[],
  tally: ImportTally,
): Promise<void> {
  const ns = options.namespace;
  const observations = entries.filter((e) => e.type === 'observation');
  const documents = entries.filter((e) => e.type === 'document');
  try {
    if (observations.length > 0) {
      const values = observations.map((e) => e.value);
      const payload = options.bulk
        ? await writer.importObservations(ns, values)
        : await writer.recordObservations(ns, values);
      tally.apply(observations, payload);
    }
    for (const group of documentGroups(documents)) {
      tally.apply(
        group,
        await writer.retainDocuments(
          ns,
          group.map((e) => e.value),
        ),
      );
    }
  } catch (error) {
    const first = entries[0]!.line;
    const last = entries[entries.length - 1]!.line;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`import stopped at lines ${first}–${last}: ${reason}`);
  }
}

/** Splits documents so no request holds more than the service accepts or ~8 MiB of text. */
function documentGroups(documents: Entry[]): Entry[][] {
  const groups: Entry[][] = [];
  let group: Entry[] = [];
  let bytes = 0;
  for (const d of documents) {
    const size = typeof d.value.content === 'string' ? Buffer.byteLength(d.value.content, 'utf8') : 0;
    if (
      group.length > 0 &&
      (group.length >= DOCUMENT_LIMITS.maxBatch || bytes + size > MAX_DOCUMENT_BATCH_BYTES)
    ) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(d);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * One JSON line → the input a GraphQL mutation would receive: DateTime fields become Dates
 * (what the DateTime scalar produces), everything else is left to the service's validation.
 */
export function parseImportLine(text: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { type: 'error', code: 'BAD_USER_INPUT', message: `not JSON: ${(error as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { type: 'error', code: 'BAD_USER_INPUT', message: 'a line must be one JSON object' };
  }
  const record = value as Record<string, unknown>;
  if ('key' in record && 'title' in record && 'content' in record && !('source' in record)) {
    return { type: 'document', value: record };
  }
  if (!('source' in record)) {
    return {
      type: 'error',
      code: 'BAD_USER_INPUT',
      message:
        'neither an ObservationInput (source, kind, occurredAt…) nor a DocumentInput (key, title, content…)',
    };
  }
  try {
    const obs: Record<string, unknown> = { ...record, occurredAt: toDate(record.occurredAt, 'occurredAt') };
    if (Array.isArray(record.assertions)) {
      obs.assertions = record.assertions.map((a, i) => assertionDates(a, `assertions.${i}`));
    }
    return { type: 'observation', value: obs };
  } catch (error) {
    return { type: 'error', code: 'BAD_USER_INPUT', message: (error as Error).message };
  }
}

function assertionDates(assertion: unknown, path: string): unknown {
  if (assertion === null || typeof assertion !== 'object') return assertion;
  const out: Record<string, unknown> = { ...(assertion as Record<string, unknown>) };
  for (const [part, fields] of [
    ['entity', ['validFrom']],
    ['fact', ['validFrom', 'validTo']],
  ] as const) {
    const inner = out[part];
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) continue;
    const copy: Record<string, unknown> = { ...(inner as Record<string, unknown>) };
    for (const field of fields) {
      if (copy[field] != null) copy[field] = toDate(copy[field], `${path}.${part}.${field}`);
    }
    out[part] = copy;
  }
  return out;
}

/** Missing values stay missing (the service reports them); strings must be strict ISO-8601. */
function toDate(value: unknown, field: string): unknown {
  if (typeof value !== 'string') return value;
  const parsed = parseDateTime(value);
  if (!parsed.ok) throw new Error(`${field}: ${parsed.error.message}`);
  return parsed.value;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
