import {
  type Context as OtelContext,
  ROOT_CONTEXT as ROOT,
  type Span,
  SpanStatusCode,
  context,
  trace,
} from '@opentelemetry/api';
import { type Metrics, activeMetrics } from './metrics.js';
import { activeTracer, errorName } from './tracing.js';

export type Pipeline = 'search' | 'context';
export type ChannelStatus = 'ok' | 'failed' | 'timeout';

/**
 * Runs one retrieval channel inside a span `channel <name>` (its SQL nests below it) with the
 * candidate count as an attribute. `parent` is the stage the channel belongs to, if any.
 */
export function channelSpan<T extends readonly unknown[]>(
  pipeline: Pipeline,
  channel: string,
  fn: () => Promise<T>,
  parent?: OtelContext,
): Promise<T> {
  const tracer = activeTracer();
  if (!tracer) return fn();
  const ctx = parent ?? context.active();
  // Under a sampled-out (or no) request span nothing below is recorded: skip the span itself.
  if (!trace.getSpan(ctx)?.isRecording()) return fn();
  const span = tracer.startSpan(
    `channel ${channel}`,
    { attributes: { 'memgate.pipeline': pipeline, 'memgate.channel': channel } },
    ctx,
  );
  return context.with(trace.setSpan(ctx, span), fn).then(
    (found) => {
      span.setAttribute('memgate.candidates', found.length);
      span.end();
      return found;
    },
    (error: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
      span.end();
      throw error;
    },
  );
}

/** Records a channel's outcome: its duration by status, and a failure or timeout if it had one. */
export function recordChannel(pipeline: Pipeline, channel: string, status: ChannelStatus, ms: number): void {
  const metrics = activeMetrics();
  if (!metrics) return;
  bound(metrics, `${pipeline} ${channel} ${status}`, () =>
    metrics.channelDuration.labels({ pipeline, channel, status }),
  ).observe(ms / 1000);
  if (status !== 'ok') metrics.channelFailures.inc({ pipeline, channel, reason: status });
}

/**
 * Histogram children bound to their labels, by a key of the label values: prom-client hashes a
 * label object on every observe otherwise. Channel and stage names are fixed by the code.
 */
const children = new WeakMap<Metrics, Map<string, { observe(v: number): void }>>();

function bound(metrics: Metrics, key: string, make: () => { observe(v: number): void }) {
  let byKey = children.get(metrics);
  if (!byKey) {
    byKey = new Map();
    children.set(metrics, byKey);
  }
  let child = byKey.get(key);
  if (!child) {
    child = make();
    byKey.set(key, child);
  }
  return child;
}

/**
 * The stages of one context compilation, one after another: each gets a span (child of the
 * span active when compilation began) and a duration sample. `begin` closes the previous stage.
 */
export class StageTrace {
  // Read only when tracing is on: with it off a compilation costs no context look-up.
  private readonly parent = activeTracer() ? context.active() : ROOT;
  private span: Span | null = null;
  private spanContext: OtelContext = this.parent;
  private name: string | null = null;
  private started = 0;

  begin(name: string): void {
    this.end();
    const tracer = activeTracer();
    const metrics = activeMetrics();
    if (!tracer && !metrics) return;
    this.name = name;
    this.started = performance.now();
    if (tracer && trace.getSpan(this.parent)?.isRecording()) {
      this.span = tracer.startSpan(`stage ${name}`, { attributes: { 'memgate.stage': name } }, this.parent);
      this.spanContext = trace.setSpan(this.parent, this.span);
    }
  }

  /** Runs `fn` inside the current stage, so its SQL spans nest below the stage's. */
  within<T>(fn: () => Promise<T>): Promise<T> {
    return this.span ? context.with(this.spanContext, fn) : fn();
  }

  run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.begin(name);
    return this.within(fn);
  }

  /** The current stage's context: the parent for channel spans. */
  current(): OtelContext {
    return this.spanContext;
  }

  end(): void {
    if (this.name === null) return;
    const metrics = activeMetrics();
    const stage = this.name;
    if (metrics)
      bound(metrics, `stage ${stage}`, () => metrics.stageDuration.labels({ stage })).observe(
        (performance.now() - this.started) / 1000,
      );
    this.span?.end();
    this.span = null;
    this.spanContext = this.parent;
    this.name = null;
  }
}

/** A compiled pack's budget outcome: tokens used and dropped items by reason. */
export function recordContextPack(used: number, dropped: readonly { reason: string }[]): void {
  const metrics = activeMetrics();
  if (!metrics) return;
  metrics.contextTokensUsed.observe(used);
  for (const d of dropped)
    metrics.contextItemsDropped.inc({ reason: DROP_REASONS.has(d.reason) ? d.reason : 'other' });
}

const DROP_REASONS = new Set(['OVER_BUDGET', 'BELOW_RELEVANCE_FLOOR', 'DUPLICATE']);
