import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { QueryResult } from '../db/database.js';
import { activeMetrics, boundedLabel } from './metrics.js';
import { activeTracer, errorName } from './tracing.js';

const QUERY_NAME = /^\s*\/\*\s*([A-Za-z_][A-Za-z0-9_.:-]{0,63})\s*\*\//;

/** The statement's `/* queryName *\/` comment; the SQL text itself never leaves this function. */
export function statementName(sql: string): string {
  const m = QUERY_NAME.exec(sql);
  if (m) return m[1]!;
  // Transaction control and savepoints are written without a name comment.
  const verb = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  return verb && CONTROL.has(verb) ? verb.toLowerCase() : 'unnamed';
}

const CONTROL = new Set(['BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE', 'SET']);

/**
 * One statement, measured: a histogram sample and row count by statement name, and a CLIENT
 * span named after it with its row count. Runs `run` untouched when both are off.
 */
export function observeStatement<R>(
  sql: string,
  run: () => Promise<QueryResult<R>>,
): Promise<QueryResult<R>> {
  const metrics = activeMetrics();
  const tracer = activeTracer();
  if (!metrics && !tracer) return run();
  const name = boundedLabel(statementName(sql));
  const started = performance.now();
  // A leaf: its parent is the active span, and nothing runs inside it that needs it active.
  const span = tracer?.startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name },
  });
  const done = (rows: number | null) => {
    if (metrics) {
      metrics.sqlDuration.observe({ statement: name }, (performance.now() - started) / 1000);
      if (rows !== null) metrics.sqlRows.inc({ statement: name }, rows);
    }
    span?.end();
  };
  return run().then(
    (result) => {
      // PGlite reports affectedRows = 0 for a SELECT: rows returned and rows written both count.
      const rows = Math.max(result.rows.length, result.rowCount);
      span?.setAttribute('db.response.returned_rows', result.rows.length);
      done(rows);
      return result;
    },
    (error: unknown) => {
      span?.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
      done(null);
      throw error;
    },
  );
}
