/**
 * A Database view that records the statements one request runs, so they can be replayed
 * straight on the driver (no GraphQL, no services) and timed: see floor-replay.ts. Only the
 * benchmark's gateway process uses it; recording is off unless a capture is open.
 */
import type { Database, Queryable } from '../src/db/database.js';

export interface CapturedStatement {
  sql: string;
  params: unknown[];
  /** When the request issued it and when its result arrived (performance.now()). */
  start: number;
  end: number;
}

export interface CaptureSummary {
  statements: number;
  /** Sum of the statements' times as the gateway saw them (ms). */
  sumMs: number;
  /**
   * Wall time during which at least one of the request's statements was in flight (ms): the
   * SQL on the request's critical path. On PostgreSQL channels overlap, so this is below the sum.
   */
  wallMs: number;
}

export class StatementCapture {
  readonly db: Database;
  private recording: CapturedStatement[] | null = null;
  private last: CapturedStatement[] = [];

  constructor(raw: Database) {
    const record = <T>(
      sql: string,
      params: readonly unknown[] | undefined,
      run: () => Promise<T>,
    ): Promise<T> => {
      const list = this.recording;
      if (!list) return run();
      // A deep copy: a caller may reuse or mutate its parameter arrays after the call.
      const entry: CapturedStatement = {
        sql,
        params: params ? structuredClone([...params]) : [],
        start: performance.now(),
        end: 0,
      };
      list.push(entry);
      return run().finally(() => {
        entry.end = performance.now();
      });
    };
    const recorded = (q: Queryable): Queryable => ({
      query: (sql, params) => record(sql, params, () => q.query(sql, params)),
      // COPY (bulk import) passes through unrecorded: it has no parameters to replay.
      ...(q.copyFrom ? { copyFrom: q.copyFrom.bind(q) } : {}),
    });
    // Spread first: adapter extras (`pglite`, `pool`) stay reachable for code that uses them.
    this.db = {
      ...raw,
      backend: raw.backend,
      query: (sql, params) => record(sql, params, () => raw.query(sql, params)),
      transaction: (name, fn) => raw.transaction(name, (tx) => fn(recorded(tx))),
      exec: (sql) => raw.exec(sql),
      close: () => raw.close(),
    };
  }

  start(): void {
    this.recording = [];
  }

  stop(): CaptureSummary {
    this.last = this.recording ?? [];
    this.recording = null;
    const done = this.last.filter((s) => s.end > 0).sort((a, b) => a.start - b.start);
    // Union of the [start, end] intervals.
    let wallMs = 0;
    let open: { from: number; to: number } | null = null;
    for (const s of done) {
      if (open && s.start <= open.to) open.to = Math.max(open.to, s.end);
      else {
        if (open) wallMs += open.to - open.from;
        open = { from: s.start, to: s.end };
      }
    }
    if (open) wallMs += open.to - open.from;
    return {
      statements: this.last.length,
      sumMs: done.reduce((a, s) => a + (s.end - s.start), 0),
      wallMs,
    };
  }

  /** The last capture's statements in the order they were issued (the floor's, the peer bench's). */
  statements(): readonly CapturedStatement[] {
    return [...this.last].sort((a, b) => a.start - b.start);
  }
}

/** The `/* queryName *\/` every store statement starts with, or its first words. */
export function statementName(sql: string): string {
  const named = /\/\*\s*([\w:.-]+)\s*\*\//.exec(sql);
  if (named) return named[1]!;
  return sql.trim().split(/\s+/).slice(0, 3).join(' ');
}
