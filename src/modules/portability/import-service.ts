import { createInterface } from 'node:readline';
import { parseDateTime } from '../../domain/temporal.js';
import type { AssertionResult, WritePayload, WriteStatus } from '../../kernel/batch.js';
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
  /**
   * The first rejections by line number of the input file, as `line N: field: problem (CODE)`
   * (`line 7: assertions[0].fact.validFrom: expected an ISO-8601 date-time, got "yesterday"
   * (BAD_USER_INPUT)`).
   */
  reasons: string[];
  /** The first PARTIAL lines the same way, one entry per rejected assertion (or the reason kept). */
  partials: string[];
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
  /** How many rejected lines, and how many PARTIAL lines, the summary lists (default 10 each). */
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
  const tally = new ImportTally(options.maxReasons ?? 10);
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
    partials: [],
    bytes: 0,
    ms: 0,
  };
  private readonly rejections = new FirstLines();
  private readonly partialLines = new FirstLines();

  constructor(private readonly maxLines: number) {}

  count(line: number, status: WriteStatus, code?: string | null, message?: string | null): void {
    this.countResult(line, { status, code, message });
  }

  private countResult(
    line: number,
    r: {
      status: WriteStatus;
      code?: string | null;
      message?: string | null;
      assertions?: AssertionResult[] | null;
    },
  ): void {
    const summary = this.summary;
    summary.statuses[r.status] = (summary.statuses[r.status] ?? 0) + 1;
    if (r.status === 'REJECTED') {
      summary.rejected++;
      this.rejections.keep(line, [lineProblem(line, r.code ?? 'REJECTED', r.message ?? '')], this.maxLines);
      summary.reasons = this.rejections.texts();
    } else if (r.status === 'PARTIAL') {
      summary.partial++;
      this.partialLines.keep(line, partialProblems(line, r), this.maxLines);
      summary.partials = this.partialLines.texts();
    } else if (r.status === 'DUPLICATE' || r.status === 'UNCHANGED') summary.duplicate++;
    else summary.accepted++;
  }

  /** Counts a written batch's results, each against its line. */
  apply(entries: readonly Entry[], payload: WritePayload): void {
    for (const r of payload.results) {
      const entry = entries[r.index];
      if (entry) this.countResult(entry.line, r);
    }
  }
}

/** The lowest-numbered lines seen so far, each with its texts. */
class FirstLines {
  private readonly lines: { line: number; texts: string[] }[] = [];

  keep(line: number, texts: string[], max: number): void {
    const at = this.lines.findIndex((l) => l.line > line);
    this.lines.splice(at < 0 ? this.lines.length : at, 0, { line, texts });
    if (this.lines.length > max) this.lines.pop();
  }

  texts(): string[] {
    return this.lines.flatMap((l) => l.texts);
  }
}

/** `line 7: assertions[0].fact.validFrom: expected … (BAD_USER_INPUT)`. */
function lineProblem(line: number, code: string, message: string): string {
  const text = truncate(readableProblem(message), 300);
  return `line ${line}: ${text ? `${text} (${code})` : code}`;
}

/** A PARTIAL line: each rejected assertion, or the reason the observation was kept as evidence. */
function partialProblems(
  line: number,
  r: { code?: string | null; message?: string | null; assertions?: AssertionResult[] | null },
): string[] {
  const refused = (r.assertions ?? []).filter((a) => a.status === 'REJECTED');
  if (refused.length === 0) return [lineProblem(line, r.code ?? 'PARTIAL', r.message ?? '')];
  return refused.map((a) => lineProblem(line, a.code ?? 'REJECTED', assertionProblem(a)));
}

/**
 * An assertion's message with the line's path in front: `entity.kind: …` of assertion 1 is
 * `assertions[1].entity.kind: …`; a message without a path says which assertion and its kind.
 */
function assertionProblem(a: AssertionResult): string {
  const at = `assertions[${a.index}]`;
  const parts = readableProblem(a.message ?? '').split('; ');
  if (!parts.some((p) => FIELD_PREFIX.test(p))) return `${at} (${a.kind}): ${parts.join('; ')}`;
  return parts.map((p) => (FIELD_PREFIX.test(p) ? `${at}.${p}` : p)).join('; ');
}

const FIELD_PREFIX = /^[\w.[\]]+: /;

/**
 * A service's message in the terms of the input line: zod paths as `assertions[0].fact.key`,
 * the "Invalid observation:" preamble dropped.
 */
export function readableProblem(message: string): string {
  return message
    .replace(/^Invalid [\w ]+: /, '')
    .split('; ')
    .map((part) => part.replace(/^([\w.]+)(?=: )/, (path) => fieldPath(path)))
    .join('; ');
}

/** `assertions.0.fact.validFrom` → `assertions[0].fact.validFrom`. */
export function fieldPath(path: string): string {
  return path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
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
    try {
      return { type: 'document', value: datesOf(record, ['occurredAt', 'validFrom'], '') };
    } catch (error) {
      return { type: 'error', code: 'BAD_USER_INPUT', message: (error as Error).message };
    }
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
      obs.assertions = record.assertions.map((a, i) => assertionDates(a, `assertions[${i}]`));
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
    out[part] = datesOf(inner as Record<string, unknown>, fields, `${path}.${part}.`);
  }
  return out;
}

/** A copy of `record` with its DateTime `fields` as Dates; `prefix` names where it sits. */
function datesOf(record: Record<string, unknown>, fields: readonly string[], prefix: string) {
  const copy: Record<string, unknown> = { ...record };
  for (const field of fields) {
    if (copy[field] != null) copy[field] = toDate(copy[field], `${prefix}${field}`);
  }
  return copy;
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
