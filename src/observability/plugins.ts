import type { DocumentNode, GraphQLSchema } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';
import { Counter, type Registry } from 'prom-client';
import type { Principal } from '../auth/principal.js';
import type { Context } from '../context.js';
import { BoundCounter, BoundHistogram, type CounterChild, type HistogramChild } from './bound-metrics.js';
import { type DatabaseLoad, type Metrics, boundedLabel, enableMetrics } from './metrics.js';
import { NONE, type OperationLabels, OperationLabeler } from './operation-labels.js';
import { useOperationSpans } from './operation-spans.js';
import { instrumentRootFields } from './root-fields.js';
import { activeTracerProvider } from './tracing.js';

export interface MetricsEndpointOptions {
  metrics: Metrics;
  schema: GraphQLSchema;
  /** With a tokens file: resolves the bearer token; /metrics then needs an admin principal. */
  authenticate?: (request: Request) => Promise<Principal> | Principal;
}

/**
 * GraphQL metrics (operations by type, name and root field, their duration, HTTP duration
 * without the URL), errors by `extensions.code` as the caller received them, SQL per request,
 * and the `/metrics` endpoint. The names and labels are those of graphql-yoga's Prometheus
 * plugin; the work is one plugin with every label set bound once per document and operation,
 * instead of label objects built, validated and hashed several times per request.
 */
export function useMetrics(options: MetricsEndpointOptions): Plugin[] {
  const { metrics, schema, authenticate } = options;
  const { registry } = metrics;
  const labeler = new OperationLabeler(schema);
  const errors = registeredCounter(metrics, 'graphql_errors_total', {
    help: 'GraphQL errors in responses, by extensions.code and the operation they came from',
    labelNames: ['code', 'operationType', 'operationName', 'rootField'],
  });
  const { operations, durations, http } = graphqlMetrics(registry);
  const bound = new WeakMap<OperationLabels, BoundChildren>();
  const childrenOf = (labels: OperationLabels): BoundChildren => {
    let found = bound.get(labels);
    if (!found) {
      const sqlLabels = { operationType: labels.operationType, rootField: labels.rootField };
      found = {
        operations: operations.child(labels),
        duration: durations.child(labels),
        statements: metrics.requestSqlStatements.child(sqlLabels),
        seconds: metrics.requestSqlSeconds.child(sqlLabels),
        http: new Map(),
      };
      bound.set(labels, found);
    }
    return found;
  };
  const httpChild = (labels: OperationLabels, method: string, status: number) => {
    const children = childrenOf(labels).http;
    const key = `${method} ${status}`;
    let child = children.get(key);
    if (!child) {
      child = http.child({ ...labels, method: boundedLabel(method), statusCode: status });
      children.set(key, child);
    }
    return child;
  };
  const started = new WeakMap<Request, number>();
  const byRequest = new WeakMap<Request, OperationLabels>();
  const endOperation = (labels: OperationLabels, since: number, sql: { statements: number; ms: number }) => {
    const children = childrenOf(labels);
    children.operations.inc();
    children.duration.observe((performance.now() - since) / 1000);
    children.statements.observe(sql.statements);
    children.seconds.observe(sql.ms / 1000);
  };
  const plugin: Plugin<Context> = {
    async onRequest({ url, request, fetchAPI, endResponse }) {
      if (url.pathname !== '/metrics') {
        started.set(request, performance.now());
        return;
      }
      const refusal = authenticate ? await refuseNonAdmin(authenticate, request) : null;
      if (refusal) {
        endResponse(
          new fetchAPI.Response(refusal.body, { status: refusal.status, headers: refusal.headers }),
        );
        return;
      }
      endResponse(
        new fetchAPI.Response(await registry.metrics(), {
          headers: { 'content-type': registry.contentType },
        }),
      );
    },
    onParse({ context }) {
      const { request, params } = context as { request?: Request; params?: { operationName?: unknown } };
      if (!request) return;
      return ({ result }) => {
        if (result instanceof Error || !result || !('kind' in result)) return;
        const name = typeof params?.operationName === 'string' ? params.operationName : undefined;
        byRequest.set(request, labeler.labels(result as DocumentNode, name));
      };
    },
    onExecute({ args }) {
      const labels = labeler.labels(args.document, args.operationName);
      byRequest.set(args.contextValue.request, labels);
      const since = performance.now();
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return endOperation(labels, since, args.contextValue.sql);
          return { onEnd: () => endOperation(labels, since, args.contextValue.sql) };
        },
      };
    },
    onResultProcess({ request, result }) {
      const labels = byRequest.get(request) ?? NONE;
      for (const r of Array.isArray(result) ? result : [result]) {
        if (!r || !('errors' in r) || !r.errors) continue;
        for (const e of r.errors as readonly { extensions?: { code?: unknown } }[]) {
          const code = typeof e.extensions?.code === 'string' ? e.extensions.code : 'none';
          errors.inc({ ...labels, code: boundedLabel(code, 40) });
        }
      }
    },
    onResponse({ request, response }) {
      const labels = byRequest.get(request);
      const since = started.get(request);
      // Parsed requests only (as yoga's plugin): the labels come from the document.
      if (labels && since !== undefined)
        httpChild(labels, request.method, response.status).observe((performance.now() - since) / 1000);
      // Refused before parsing (authentication): no result was processed, the status says why.
      if (response.status === 401 && !labels) errors.inc({ ...NONE, code: 'UNAUTHENTICATED' });
    },
  };
  return [plugin as Plugin];
}

/** The GraphQL metrics of a registry; a second gateway in the process shares them. */
const byRegistry = new WeakMap<Registry, ReturnType<typeof createGraphqlMetrics>>();

function graphqlMetrics(registry: Registry) {
  let found = byRegistry.get(registry);
  if (!found) {
    found = createGraphqlMetrics(registry);
    byRegistry.set(registry, found);
  }
  return found;
}

function createGraphqlMetrics(registry: Registry) {
  const labelNames = ['operationType', 'operationName', 'rootField'] as const;
  return {
    operations: new BoundCounter(
      'graphql_envelop_request',
      'GraphQL operations executed',
      labelNames,
      registry,
    ),
    durations: new BoundHistogram(
      'graphql_envelop_request_duration',
      'GraphQL operation duration (parse to result), by operation and root field',
      labelNames,
      REQUEST_SECONDS,
      registry,
    ),
    http: new BoundHistogram(
      'graphql_yoga_http_duration',
      'HTTP duration of GraphQL requests (no URL label: it may carry caller text)',
      [...labelNames, 'method', 'statusCode'],
      REQUEST_SECONDS,
      registry,
    ),
  };
}

interface BoundChildren {
  operations: CounterChild;
  duration: HistogramChild;
  statements: HistogramChild;
  seconds: HistogramChild;
  http: Map<string, HistogramChild>;
}

async function refuseNonAdmin(
  authenticate: (request: Request) => Promise<Principal> | Principal,
  request: Request,
): Promise<{ status: number; body: string; headers: Record<string, string> } | null> {
  let principal: Principal;
  try {
    principal = await authenticate(request);
  } catch {
    return {
      status: 401,
      body: 'metrics need an admin bearer token\n',
      headers: { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer realm="memgate"' },
    };
  }
  if (principal.admin) return null;
  return {
    status: 403,
    body: 'metrics need an admin principal\n',
    headers: { 'content-type': 'text/plain; charset=utf-8' },
  };
}

function registeredCounter<L extends string>(
  metrics: Metrics,
  name: string,
  conf: { help: string; labelNames: readonly L[] },
): Counter<L> {
  const existing = metrics.registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, ...conf, registers: [metrics.registry] });
}

const REQUEST_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** GraphQL spans: one per operation, child of the HTTP request span (see operation-spans.ts). */
export function useTracing(): Plugin[] {
  return activeTracerProvider() ? [useOperationSpans() as Plugin] : [];
}

export interface ObservabilityOptions {
  schema: GraphQLSchema;
  metricsEnabled: boolean;
  db: { load?(): DatabaseLoad; observeQueueWait?(listener: ((ms: number) => void) | undefined): void };
  authenticate?: (request: Request) => Promise<Principal> | Principal;
}

/** Everything /metrics and tracing add to the gateway; nothing at all when both are off. */
export function observabilityPlugins(options: ObservabilityOptions): Plugin[] {
  const plugins: Plugin[] = [...useTracing()];
  if (options.metricsEnabled) {
    const { db } = options;
    const metrics = enableMetrics(() => db.load?.() ?? {});
    db.observeQueueWait?.((ms) => metrics.pgliteQueueWait.observe(ms / 1000));
    plugins.push(...useMetrics({ metrics, schema: options.schema, authenticate: options.authenticate }));
  }
  if (plugins.length > 0) instrumentRootFields(options.schema);
  return plugins;
}
