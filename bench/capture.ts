/**
 * The gateway-overhead floor: a Database view that records the statements one request runs,
 * so they can be replayed straight on the driver (no GraphQL, no services) and timed. Only the
 * benchmark's gateway process uses it; recording is off unless a capture is open.
 */
import type { Database, Queryable } from '../src/db/database.js';

export interface CapturedStatement {
  sql: string;
  params: unknown[];
}

export interface ReplayResult {
  /** Sum of the statements' times, one entry per repetition (ms). */
  totals: number[];
  statements: number;
  /** Statements that failed on replay (e.g. re-inserting a row the request created). */
  errors: number;
  /** Median time per statement name over the repetitions, slowest first. */
  byName: { name: string; ms: number }[];
}

export class StatementCapture {
  readonly db: Database;
  private recording: CapturedStatement[] | null = null;
  private last: CapturedStatement[] = [];

  constructor(private readonly raw: Database) {
    const record = (sql: string, params: readonly unknown[] | undefined) => {
      this.recording?.push({ sql, params: params ? [...params] : [] });
    };
    const recorded = (q: Queryable): Queryable => ({
      query: (sql, params) => {
        record(sql, params);
        return q.query(sql, params);
      },
    });
    // Spread first: adapter extras (`pglite`, `pool`) stay reachable for code that uses them.
    this.db = {
      ...raw,
      backend: raw.backend,
      query: (sql, params) => {
        record(sql, params);
        return raw.query(sql, params);
      },
      transaction: (name, fn) => raw.transaction(name, (tx) => fn(recorded(tx))),
      exec: (sql) => raw.exec(sql),
      close: () => raw.close(),
    };
  }

  start(): void {
    this.recording = [];
  }

  stop(): CapturedStatement[] {
    this.last = this.recording ?? [];
    this.recording = null;
    return this.last;
  }

  /** Runs the last capture's statements one after another on the raw driver, `repeats` times. */
  async replay(repeats: number): Promise<ReplayResult> {
    const totals: number[] = [];
    const perName = new Map<string, number[]>();
    let errors = 0;
    for (let r = 0; r < repeats; r++) {
      let total = 0;
      for (const s of this.last) {
        const started = performance.now();
        try {
          await this.raw.query(s.sql, s.params);
        } catch {
          if (r === 0) errors++;
        }
        const ms = performance.now() - started;
        total += ms;
        const name = statementName(s.sql);
        const list = perName.get(name) ?? [];
        list.push(ms);
        perName.set(name, list);
      }
      totals.push(total);
    }
    const byName = [...perName.entries()]
      .map(([name, list]) => ({ name, ms: list.reduce((a, b) => a + b, 0) / Math.max(1, repeats) }))
      .sort((a, b) => b.ms - a.ms);
    return { totals, statements: this.last.length, errors, byName };
  }
}

/** The `/* queryName *\/` every store statement starts with, or its first words. */
export function statementName(sql: string): string {
  const named = /\/\*\s*([\w:.-]+)\s*\*\//.exec(sql);
  if (named) return named[1]!;
  return sql.trim().split(/\s+/).slice(0, 3).join(' ');
}
