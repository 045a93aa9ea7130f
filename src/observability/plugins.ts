import { useOpenTelemetry } from '@envelop/opentelemetry';
import { SpanKind } from '@opentelemetry/api';
import { createCounter, createHistogram, usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, type Registry } from 'prom-client';
import type { Principal } from '../auth/principal.js';
import type { Context } from '../context.js';
import { type DatabaseLoad, type Metrics, boundedLabel, enableMetrics } from './metrics.js';
import { NONE, type OperationLabels, OperationLabeler } from './operation-labels.js';
import { instrumentRootFields } from './root-fields.js';
import { activeTracerProvider } from './tracing.js';

export interface MetricsEndpointOptions {
  metrics: Metrics;
  schema: GraphQLSchema;
  /** With a tokens file: resolves the bearer token; /metrics then needs an admin principal. */
  authenticate?: (request: Request) => Promise<Principal> | Principal;
}

/**
 * GraphQL metrics through graphql-yoga's Prometheus plugin (request count and duration by
 * operation type, name and root field; HTTP duration without the URL), errors by
 * `extensions.code` as the caller received them, SQL per request, and the `/metrics` endpoint.
 */
export function useMetrics(options: MetricsEndpointOptions): Plugin[] {
  const { metrics, schema } = options;
  const labeler = new OperationLabeler(schema);
  const errors = registeredCounter(metrics, 'graphql_errors_total', {
    help: 'GraphQL errors in responses, by extensions.code and the operation they came from',
    labelNames: ['code', 'operationType', 'operationName', 'rootField'],
  });
  const prometheus = operationMetrics(metrics.registry, labeler);
  return [endpointAndErrors(options, labeler, errors) as Plugin, prometheus];
}

const OPERATION_LABELS = ['operationType', 'operationName', 'rootField'] as const;

/** graphql-yoga's Prometheus plugin: operations and their duration, HTTP duration; no endpoint. */
function operationMetrics(registry: Registry, labeler: OperationLabeler): Plugin {
  const labelNames = OPERATION_LABELS;
  // The plugin's own operationName defaults to 'Anonymous'; the labeler reads the document.
  const fill = (params: { document?: DocumentNode }, raw: unknown) =>
    labeler.labels(params.document, operationNameOf(raw));
  return usePrometheus({
    registry,
    endpoint: false,
    metrics: {
      graphql_envelop_request: createCounter({
        registry,
        counter: { name: 'graphql_envelop_request', help: 'GraphQL operations executed', labelNames },
        fillLabelsFn: fill,
      }),
      graphql_envelop_request_duration: createHistogram({
        registry,
        histogram: {
          name: 'graphql_envelop_request_duration',
          help: 'GraphQL operation duration (parse to result), by operation and root field',
          labelNames,
          buckets: REQUEST_SECONDS,
        },
        fillLabelsFn: fill,
      }),
      graphql_yoga_http_duration: createHistogram({
        registry,
        histogram: {
          name: 'graphql_yoga_http_duration',
          help: 'HTTP duration of GraphQL requests (no URL label: it may carry caller text)',
          labelNames: [...labelNames, 'method', 'statusCode'],
          buckets: REQUEST_SECONDS,
        },
        fillLabelsFn: (params, raw: { request: Request; response: Response }) => ({
          ...labeler.labels(params.document, operationNameOf(raw)),
          method: boundedLabel(raw.request.method),
          statusCode: raw.response.status,
        }),
      }),
      graphql_envelop_request_time_summary: false,
      graphql_envelop_phase_parse: false,
      graphql_envelop_phase_validate: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_phase_execute: false,
      graphql_envelop_phase_subscribe: false,
      graphql_envelop_error_result: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_execute_resolver: false,
    },
  });
}

type Observer = { observe(v: number): void };

/**
 * The SQL-per-request histograms' children for an operation's labels. The labeler returns one
 * labels object per document and operation: they are bound once instead of hashing a label
 * object on every request.
 */
function sqlObservers(
  metrics: Metrics,
): (labels: OperationLabels) => { statements: Observer; seconds: Observer } {
  const bySqlLabels = new WeakMap<OperationLabels, { statements: Observer; seconds: Observer }>();
  return (labels) => {
    let found = bySqlLabels.get(labels);
    if (!found) {
      const sqlLabels = { operationType: labels.operationType, rootField: labels.rootField };
      found = {
        statements: metrics.requestSqlStatements.labels(sqlLabels),
        seconds: metrics.requestSqlSeconds.labels(sqlLabels),
      };
      bySqlLabels.set(labels, found);
    }
    return found;
  };
}

/** The `/metrics` endpoint, SQL per request, and errors by `extensions.code` as the caller received them. */
function endpointAndErrors(
  options: MetricsEndpointOptions,
  labeler: OperationLabeler,
  errors: Counter<'code' | (typeof OPERATION_LABELS)[number]>,
): Plugin<Context> {
  const { metrics, authenticate } = options;
  const { registry } = metrics;
  const byRequest = new WeakMap<Request, OperationLabels>();
  const sqlChildren = sqlObservers(metrics);
  return {
    async onRequest({ url, request, fetchAPI, endResponse }) {
      if (url.pathname !== '/metrics') return;
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
    onExecute({ args }) {
      const labels = labeler.labels(args.document, args.operationName);
      byRequest.set(args.contextValue.request, labels);
      return {
        onExecuteDone() {
          const { statements, ms } = args.contextValue.sql;
          const sql = sqlChildren(labels);
          sql.statements.observe(statements);
          sql.seconds.observe(ms / 1000);
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
      // Refused before parsing (authentication): no result was processed, the status says why.
      if (response.status === 401 && !byRequest.has(request))
        errors.inc({ ...NONE, code: 'UNAUTHENTICATED' });
    },
  };
}

function operationNameOf(raw: unknown): string | undefined {
  const params = (raw as { params?: { operationName?: unknown } } | undefined)?.params;
  return typeof params?.operationName === 'string' ? params.operationName : undefined;
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

/**
 * GraphQL spans from the envelop OpenTelemetry plugin: one per operation, child of the HTTP
 * request span. The document, variables and results are left out: they carry caller text.
 */
export function useTracing(): Plugin[] {
  const provider = activeTracerProvider();
  if (!provider) return [];
  return [
    useOpenTelemetry(
      { resolvers: false, document: false, variables: false, result: false },
      provider,
      SpanKind.INTERNAL,
      {},
      'memgate',
    ) as Plugin,
  ];
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
