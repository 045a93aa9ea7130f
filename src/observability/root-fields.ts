import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { GraphQLFieldResolver, GraphQLSchema } from 'graphql';
import type { Context } from '../context.js';
import { type Metrics, activeMetrics } from './metrics.js';
import { operationContext } from './operation-spans.js';
import { activeTracer, errorName } from './tracing.js';

const WRAPPED = Symbol('memgate.rootFieldHooks');
const WRITE_STATUSES = new Set(['CREATED', 'UPDATED', 'UNCHANGED', 'REINFORCED', 'DUPLICATE', 'REJECTED']);

/**
 * The resolvers of interest are the root fields: each gets a span (`Query.context`…) that its
 * services' stage, channel and SQL spans nest under, and batch mutations count their items by
 * status. Wrapped once per schema; the wrapper checks at call time whether anything is on.
 */
export function instrumentRootFields(schema: GraphQLSchema): void {
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    if (!type) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve as
        | (GraphQLFieldResolver<unknown, Context> & { [WRAPPED]?: true })
        | undefined;
      if (!resolve || resolve[WRAPPED]) continue;
      const mutation = type === schema.getMutationType() ? field.name : null;
      const wrapped: GraphQLFieldResolver<unknown, Context> & { [WRAPPED]?: true } = (
        root,
        args,
        ctx,
        info,
      ) => {
        const tracer = activeTracer();
        const metrics = activeMetrics();
        // Only a mutation with metrics on has items to count; anything else waits on no extra promise.
        const count =
          mutation && metrics
            ? (value: unknown) => {
                countWrites(metrics, mutation, value);
                return value;
              }
            : null;
        const parent = tracer ? operationContext(ctx) : undefined;
        // No tracer, or a sampled-out request: no span, and its stages and statements record none either.
        if (!tracer || !parent || !trace.getSpan(parent)?.isRecording())
          return count ? settle(resolve(root, args, ctx, info), count) : resolve(root, args, ctx, info);
        const span = tracer.startSpan(
          `${type.name}.${field.name}`,
          { attributes: { 'graphql.field.name': field.name, 'graphql.type.name': type.name } },
          parent,
        );
        const end = (value: unknown) => {
          if (value instanceof Error)
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(value) });
          span.end();
          return count ? count(value) : value;
        };
        try {
          const value = context.with(trace.setSpan(parent, span), () => resolve(root, args, ctx, info));
          return settle(value, end, (error) => {
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
            span.end();
          });
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
          span.end();
          throw error;
        }
      };
      wrapped[WRAPPED] = true;
      field.resolve = wrapped;
    }
  }
}

function settle(value: unknown, onValue: (v: unknown) => unknown, onError?: (e: unknown) => void): unknown {
  if (value instanceof Promise) {
    return value.then(onValue, (error: unknown) => {
      onError?.(error);
      throw error;
    });
  }
  return onValue(value);
}

function countWrites(metrics: Metrics, mutation: string, payload: unknown): void {
  const results = (payload as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return;
  for (const r of results) {
    const status = (r as { status?: unknown }).status;
    if (typeof status === 'string' && WRITE_STATUSES.has(status))
      metrics.ingestRows.inc({ mutation, status });
  }
}
