import { type Attributes, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { type Metrics, activeMetrics, boundedLabel } from '../observability/metrics.js';
import { activeTracer, errorName } from '../observability/tracing.js';

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
 * What every run of one named statement shares: its label, its span attributes and its
 * histogram and counter children bound to that label. Keyed by the name, read from the text's
 * first characters only: a key of the whole text would be hashed on every run (texts are built
 * per call, some are kilobytes long).
 */
interface StatementInfo {
  name: string;
  attributes: Attributes;
  bound: { metrics: Metrics; duration: { observe(v: number): void }; rows: { inc(v: number): void } } | null;
}

const byName = new Map<string, StatementInfo>();
// The name comment and what may precede it fit in this many characters.
const HEAD = 120;

function statementInfo(sql: string): StatementInfo {
  const name = boundedLabel(statementName(sql.length > HEAD ? sql.slice(0, HEAD) : sql));
  let info = byName.get(name);
  if (!info) {
    info = { name, attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name }, bound: null };
    byName.set(name, info);
  }
  return info;
}

function boundMetrics(info: StatementInfo, metrics: Metrics): NonNullable<StatementInfo['bound']> {
  if (info.bound?.metrics !== metrics) {
    const labels = { statement: info.name };
    info.bound = {
      metrics,
      duration: metrics.sqlDuration.labels(labels),
      rows: metrics.sqlRows.labels(labels),
    };
  }
  return info.bound;
}

/**
 * One statement, measured: a histogram sample and row count by statement name, and a CLIENT
 * span named after it with its row count, when the request it runs for is being traced (a
 * statement outside any recording span, or under a sampled-out one, costs no span). Runs
 * `run` untouched when both are off.
 */
export function observeStatement<T extends { rows: readonly unknown[]; rowCount: number }>(
  sql: string,
  run: () => Promise<T>,
): Promise<T> {
  const metrics = activeMetrics();
  const tracer = activeTracer();
  if (!metrics && !tracer) return run();
  const info = statementInfo(sql);
  const bound = metrics ? boundMetrics(info, metrics) : null;
  const started = performance.now();
  let span = null;
  if (tracer) {
    const parent = context.active();
    // A leaf: its parent is the active span, and nothing runs inside it that needs it active.
    if (trace.getSpan(parent)?.isRecording())
      span = tracer.startSpan(info.name, { kind: SpanKind.CLIENT, attributes: info.attributes }, parent);
  }
  if (!span && !bound) return run();
  return run().then(
    (result) => {
      // PGlite reports affectedRows = 0 for a SELECT: rows returned and rows written both count.
      if (bound) {
        bound.duration.observe((performance.now() - started) / 1000);
        bound.rows.inc(Math.max(result.rows.length, result.rowCount));
      }
      if (span) {
        span.setAttribute('db.response.returned_rows', result.rows.length);
        span.end();
      }
      return result;
    },
    (error: unknown) => {
      bound?.duration.observe((performance.now() - started) / 1000);
      if (span) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
        span.end();
      }
      throw error;
    },
  );
}
