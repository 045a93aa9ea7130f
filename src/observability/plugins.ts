import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Principal } from '../auth/principal.js';
import type { Context } from '../context.js';
import {
  type DatabaseLoad,
  type Metrics,
  type FeatureMetrics,
  boundedLabel,
  enableMetrics,
  registerFeatureMetrics,
} from './metrics.js';
import { NONE, type OperationLabels, OperationLabeler } from './operation-labels.js';
import { useOperationSpans } from './operation-spans.js';
import { instrumentRootFields } from './root-fields.js';
import { activeTracerProvider } from './tracing.js';

export interface MetricsEndpointOptions {
  metrics: Metrics;
  /** With a tokens file: resolves the bearer token; /metrics then needs an admin principal. */
  authenticate?: (request: Request) => Promise<Principal> | Principal;
}

const OPERATION_LABELS = ['operationType', 'operationName', 'rootField'] as const;

type Observer = { observe(v: number): void };

/** What a request of one operation records, bound to the operation's labels on first use. */
interface OperationChildren {
  operations: { inc(): void };
  duration: Observer;
  sqlStatements: Observer;
  sqlSeconds: Observer;
  /** HTTP duration by method and status, bound as they are seen. */
  http(method: string, status: number): Observer;
}

function operationChildren(metrics: Metrics): (labels: OperationLabels) => OperationChildren {
  const { operations, duration, http } = graphqlMetrics(metrics.registry);
  const byLabels = new WeakMap<OperationLabels, OperationChildren>();
  const bind = (labels: OperationLabels): OperationChildren => {
    const sqlLabels = { operationType: labels.operationType, rootField: labels.rootField };
    const httpChildren = new Map<string, Observer>();
    return {
      operations: operations.labels(labels),
      duration: duration.labels(labels),
      sqlStatements: metrics.requestSqlStatements.labels(sqlLabels),
      sqlSeconds: metrics.requestSqlSeconds.labels(sqlLabels),
      http(method, status) {
        const key = `${method} ${status}`;
        let child = httpChildren.get(key);
        if (!child) {
          child = http.labels({ ...labels, method: boundedLabel(method), statusCode: String(status) });
          httpChildren.set(key, child);
        }
        return child;
      },
    };
  };
  return (labels) => {
    let found = byLabels.get(labels);
    if (!found) {
      found = bind(labels);
      byLabels.set(labels, found);
    }
    return found;
  };
}

/** The GraphQL request metrics, under the names the stock yoga plugin gives them. */
function graphqlMetrics(registry: Registry) {
  const registers = [registry];
  return {
    operations: registered(
      registry,
      'graphql_envelop_request',
      () =>
        new Counter({
          name: 'graphql_envelop_request',
          help: 'GraphQL operations executed',
          labelNames: OPERATION_LABELS,
          registers,
        }),
    ),
    duration: registered(
      registry,
      'graphql_envelop_request_duration',
      () =>
        new Histogram({
          name: 'graphql_envelop_request_duration',
          help: 'GraphQL operation duration in seconds (request start to result), by operation and root field',
          labelNames: OPERATION_LABELS,
          buckets: REQUEST_SECONDS,
          registers,
        }),
    ),
    http: registered(
      registry,
      'graphql_yoga_http_duration',
      () =>
        new Histogram({
          name: 'graphql_yoga_http_duration',
          help: 'HTTP duration in seconds of GraphQL requests (no URL label: it may carry caller text)',
          labelNames: [...OPERATION_LABELS, 'method', 'statusCode'],
          buckets: REQUEST_SECONDS,
          registers,
        }),
    ),
    errors: registered(
      registry,
      'graphql_errors_total',
      () =>
        new Counter({
          name: 'graphql_errors_total',
          help: 'GraphQL errors in responses, by extensions.code and the operation they came from',
          labelNames: ['code', ...OPERATION_LABELS],
          registers,
        }),
    ),
  };
}

/** A metric registered once per registry: a second gateway in the process shares it. */
function registered<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

/** Per request: when it began and its operation's metrics, once the operation is known. */
interface RequestRecord {
  started: number;
  labels: OperationLabels;
  children: OperationChildren | null;
}

/**
 * GraphQL metrics (operations and their duration by type, name and root field; HTTP duration
 * without the URL), errors by `extensions.code` as the caller received them, SQL per request,
 * and the `/metrics` endpoint. One plugin of our own calling prom-client directly: each
 * operation's counter and histogram children are bound once, so a request costs a handful of
 * observations and no label hashing.
 */
function operationMetrics(options: MetricsEndpointOptions, labeler: OperationLabeler): Plugin<Context> {
  const { metrics, authenticate } = options;
  const { registry } = metrics;
  const { errors } = graphqlMetrics(registry);
  const children = operationChildren(metrics);
  const requests = new WeakMap<Request, RequestRecord>();
  return {
    // Synchronous for every request but a scrape: an async hook costs each request a promise.
    onRequest({ url, request, fetchAPI, endResponse }) {
      if (url.pathname !== '/metrics') {
        requests.set(request, { started: performance.now(), labels: NONE, children: null });
        return;
      }
      return scrape(request, authenticate, registry).then(({ body, status, headers }) =>
        endResponse(new fetchAPI.Response(body, { status, headers })),
      );
    },
    onExecute({ args }) {
      const record = requests.get(args.contextValue.request);
      const labels = labeler.labels(args.document, args.operationName);
      const bound = children(labels);
      if (record) {
        record.labels = labels;
        record.children = bound;
      }
      return {
        onExecuteDone() {
          const { statements, ms } = args.contextValue.sql;
          bound.operations.inc();
          if (record) bound.duration.observe((performance.now() - record.started) / 1000);
          bound.sqlStatements.observe(statements);
          bound.sqlSeconds.observe(ms / 1000);
        },
      };
    },
    onResultProcess({ request, result }) {
      const labels = requests.get(request)?.labels ?? NONE;
      for (const r of Array.isArray(result) ? result : [result]) {
        if (!r || !('errors' in r) || !r.errors) continue;
        for (const e of r.errors as readonly { extensions?: { code?: unknown } }[]) {
          const code = typeof e.extensions?.code === 'string' ? e.extensions.code : 'none';
          errors.inc({ ...labels, code: boundedLabel(code, 40) });
        }
      }
    },
    onResponse({ request, response }) {
      const record = requests.get(request);
      if (!record) return;
      // Refused before parsing (authentication): no result was processed, the status says why.
      if (response.status === 401 && !record.children) errors.inc({ ...NONE, code: 'UNAUTHENTICATED' });
      const bound = record.children ?? children(NONE);
      bound.http(request.method, response.status).observe((performance.now() - record.started) / 1000);
    },
  };
}

/** The exposition, or why the caller may not read it. */
async function scrape(
  request: Request,
  authenticate: MetricsEndpointOptions['authenticate'],
  registry: Registry,
): Promise<{ body: string; status: number; headers: Record<string, string> }> {
  const refusal = authenticate ? await refuseNonAdmin(authenticate, request) : null;
  if (refusal) return refusal;
  return { body: await registry.metrics(), status: 200, headers: { 'content-type': registry.contentType } };
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

const REQUEST_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ObservabilityOptions {
  schema: GraphQLSchema;
  metricsEnabled: boolean;
  db: { load?(): DatabaseLoad; observeQueueWait?(listener: ((ms: number) => void) | undefined): void };
  authenticate?: (request: Request) => Promise<Principal> | Principal;
  /** The features' own metrics: counters declared up front, gauges read on scrape (queue depths). */
  features?: readonly FeatureMetrics[];
}

/** Everything /metrics and tracing add to the gateway; nothing at all when both are off. */
export function observabilityPlugins(options: ObservabilityOptions): Plugin[] {
  const labeler = new OperationLabeler(options.schema);
  const plugins: Plugin[] = activeTracerProvider() ? [useOperationSpans(labeler) as Plugin] : [];
  if (options.metricsEnabled) {
    const { db } = options;
    const metrics = enableMetrics(() => db.load?.() ?? {});
    db.observeQueueWait?.((ms) => metrics.pgliteQueueWait.observe(ms / 1000));
    registerFeatureMetrics(metrics, options.features ?? []);
    plugins.push(operationMetrics({ metrics, authenticate: options.authenticate }, labeler) as Plugin);
  }
  if (plugins.length > 0) instrumentRootFields(options.schema);
  return plugins;
}
