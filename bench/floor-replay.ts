/**
 * The SQL floor of a read, in the gateway process: the statements captured from real requests,
 * replayed on the same driver (`openPostgres`: the same pools, prepared statements and
 * generic-plan connections the gateway uses) with no GraphQL and no services. A request's
 * statements run one after another in the order the gateway issued them (some of them ran
 * concurrently there).
 */
import type { Database } from '../src/db/database.js';
import { type CapturedStatement, statementName } from './capture.js';

/** The statement that stores a context trace: its trace id is unique per request. */
const TRACE_INSERT = 'insertContextTraces';

/** One captured request replayed once. */
export interface RequestReplay {
  /** Sum of its statements' times (ms). */
  ms: number;
  statements: number;
  /** Statements that failed (counted, and their time still in `ms`). */
  errors: number;
  firstError?: string;
  /** Time per statement name, summed within the request (ms). */
  byName: Record<string, number>;
}

export interface ThroughputReplay {
  concurrency: number;
  /** Whole requests replayed. */
  requests: number;
  wallMs: number;
  errors: number;
  firstError?: string;
}

export class FloorReplay {
  private requests: CapturedStatement[][] = [];
  /** Makes every replayed trace id new: the table's key is (namespace, trace_id). */
  private replayed = 0;

  constructor(private readonly raw: Database) {}

  clear(): void {
    this.requests = [];
  }

  /** Keeps one request's statements (in the order issued); answers its index in the set. */
  keep(statements: readonly CapturedStatement[]): number {
    this.requests.push([...statements]);
    return this.requests.length - 1;
  }

  /** Every kept request once, one after another, in the order kept. */
  async replayEach(): Promise<RequestReplay[]> {
    const out: RequestReplay[] = [];
    for (const request of this.requests) out.push(await this.replayOne(request));
    return out;
  }

  /**
   * `concurrency` workers, each replaying whole requests (the next of the kept set, round
   * robin) until `durationMs` has passed; the wall time includes the requests in flight then.
   */
  async throughput(concurrency: number, durationMs: number): Promise<ThroughputReplay> {
    if (this.requests.length === 0) throw new Error('no captured requests to replay');
    const result: ThroughputReplay = { concurrency, requests: 0, wallMs: 0, errors: 0 };
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (performance.now() - started < durationMs) {
        const replay = await this.replayOne(this.requests[next++ % this.requests.length]!);
        result.requests += 1;
        result.errors += replay.errors;
        if (replay.firstError && !result.firstError) result.firstError = replay.firstError;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    result.wallMs = performance.now() - started;
    return result;
  }

  private async replayOne(statements: readonly CapturedStatement[]): Promise<RequestReplay> {
    const replay: RequestReplay = { ms: 0, statements: statements.length, errors: 0, byName: {} };
    for (const s of statements) {
      const name = statementName(s.sql);
      // Prepared before the clock starts: the rewrite is the bench's work, not the statement's.
      const params =
        name === TRACE_INSERT ? withUniqueTraceIds(s.params, `floor${++this.replayed}`) : s.params;
      const started = performance.now();
      try {
        await this.raw.query(s.sql, params);
      } catch (error) {
        replay.errors += 1;
        replay.firstError ??= `${name}: ${error instanceof Error ? error.message : String(error)}`;
      }
      const ms = performance.now() - started;
      replay.ms += ms;
      replay.byName[name] = (replay.byName[name] ?? 0) + ms;
    }
    return replay;
  }
}

/**
 * The parameters of a trace insert with each row's `trace_id` made unique by `suffix`: the
 * rows travel as one JSON array parameter (jsonb_to_recordset). Other parameters are kept as
 * they are; a parameter that is not such an array is left alone.
 */
export function withUniqueTraceIds(params: readonly unknown[], suffix: string): unknown[] {
  return params.map((p) => {
    if (typeof p !== 'string' || !p.startsWith('[')) return p;
    let rows: unknown;
    try {
      rows = JSON.parse(p);
    } catch {
      return p;
    }
    if (!Array.isArray(rows) || !rows.every((r) => typeof r === 'object' && r !== null && 'trace_id' in r))
      return p;
    return JSON.stringify(
      rows.map((r: Record<string, unknown>) => ({ ...r, trace_id: `${String(r.trace_id)}-${suffix}` })),
    );
  });
}
