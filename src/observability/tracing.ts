import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Context as OtelContext,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';

/**
 * OpenTelemetry for memgate. Off (a null tracer, and no wrapper on any hot path) unless a
 * provider is installed: `startOtlpTracing` when OTEL_EXPORTER_OTLP_ENDPOINT is set, or a test's
 * provider with an in-memory exporter.
 */
let tracer: Tracer | null = null;
let provider: TracerProvider | null = null;

/**
 * The context manager startOtlpTracing registers, kept idle while no sampled request is in
 * flight: an AsyncLocalStorage, once entered, hooks every promise of the process (some 50 µs of
 * CPU per request on Node 20) until it is disabled again. Entering it (`context.with`) wakes it.
 */
let idleableContext: { disable(): unknown } | null = null;
let sampledInFlight = 0;

export function activeTracer(): Tracer | null {
  return tracer;
}

export function activeTracerProvider(): TracerProvider | null {
  return provider;
}

/** Spans go to `tracerProvider`; it should be registered globally (context manager, W3C propagator). */
export function enableTracing(tracerProvider: TracerProvider): void {
  provider = tracerProvider;
  tracer = tracerProvider.getTracer('memgate');
}

export function disableTracing(): void {
  provider = null;
  tracer = null;
}

/**
 * The share of new traces recorded when OTEL_TRACES_SAMPLER is unset: one request in ten.
 * A caller's sampled trace is always continued, an unsampled one never recorded.
 */
export const DEFAULT_TRACE_RATIO = 0.1;

/**
 * Registers a Node tracer provider exporting over OTLP/HTTP. The exporter reads the standard
 * OTEL_EXPORTER_OTLP_* variables itself; the W3C trace-context propagator is the default. With
 * OTEL_TRACES_SAMPLER set the SDK builds the sampler it names (with OTEL_TRACES_SAMPLER_ARG);
 * without it, parent-based with DEFAULT_TRACE_RATIO of new traces.
 */
export async function startOtlpTracing(
  serviceName: string,
  env: Record<string, string | undefined> = process.env,
): Promise<{ shutdown(): Promise<void> }> {
  const [
    sdk,
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
  ]);
  const nodeProvider = new sdk.NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName }),
    spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter())],
    ...(env.OTEL_TRACES_SAMPLER
      ? {}
      : {
          sampler: new sdk.ParentBasedSampler({
            root: new sdk.TraceIdRatioBasedSampler(DEFAULT_TRACE_RATIO),
          }),
        }),
  });
  const contextManager = new AsyncLocalStorageContextManager();
  // Trace context only: memgate reads no baggage, and the default adds a baggage
  // propagator that parses the headers of every request a second time.
  nodeProvider.register({ contextManager, propagator: new W3CTraceContextPropagator() });
  idleableContext = contextManager.disable();
  enableTracing(nodeProvider);
  return { shutdown: () => nodeProvider.shutdown() };
}

/**
 * Runs one HTTP request inside a SERVER span whose parent is the caller's `traceparent`
 * (W3C trace context), so an agent's trace continues into memgate. Only the path is recorded:
 * query strings may carry caller text.
 */
export function withRequestSpan(req: IncomingMessage, res: ServerResponse, run: () => void): void {
  const t = tracer;
  if (!t) {
    run();
    return;
  }
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  // Name and attributes once sampled: the SDK sanitises attributes given to startSpan even for
  // a span it drops, and most requests are dropped.
  const span = t.startSpan('HTTP', { kind: SpanKind.SERVER }, parent);
  // Sampled out: no context to carry, so nothing below looks for a span or starts one.
  if (!span.isRecording()) {
    run();
    return;
  }
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const method = req.method ?? 'GET';
  span.updateName(`${method} ${path}`);
  span.setAttributes({ 'http.request.method': method, 'url.path': path });
  sampledInFlight += 1;
  res.on('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    sampledInFlight -= 1;
    if (sampledInFlight === 0) idleableContext?.disable();
  });
  context.with(trace.setSpan(parent, span), run);
}

/** Runs `fn` in a child span of the active one; the span ends when `fn` settles. */
export async function inSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span | null) => Promise<T>,
  parent?: OtelContext,
): Promise<T> {
  const t = tracer;
  if (!t) return fn(null);
  const ctx = parent ?? context.active();
  if (!trace.getSpan(ctx)?.isRecording()) return fn(null);
  const span = t.startSpan(name, { attributes }, ctx);
  try {
    return await context.with(trace.setSpan(ctx, span), () => fn(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** The class of an error, never its message (messages may quote caller input). */
export function errorName(error: unknown): string {
  const code = (error as { code?: unknown; extensions?: { code?: unknown } } | null)?.extensions?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'Error';
}
