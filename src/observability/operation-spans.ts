import { type Context as OtelContext, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { OperationLabeler } from './operation-labels.js';
import { activeTracer } from './tracing.js';

/** The OpenTelemetry context of each traced operation, by its GraphQL context: root fields nest under it. */
const operations = new WeakMap<object, OtelContext>();

export function operationContext(graphqlContext: object): OtelContext | undefined {
  return operations.get(graphqlContext);
}

/**
 * One span per GraphQL operation (`query.Pack`), child of the request span, when that span is
 * recording. A sampled-out request never reaches the tracer here: no span, no context. The
 * document, variables and results are left out: they carry caller text.
 */
export function useOperationSpans(labeler: OperationLabeler): Plugin<Context> {
  return {
    onExecute({ args }) {
      const tracer = activeTracer();
      if (!tracer) return;
      const parent = context.active();
      if (!trace.getSpan(parent)?.isRecording()) return;
      const labels = labeler.labels(args.document, args.operationName);
      const span = tracer.startSpan(
        `${labels.operationType}.${labels.operationName}`,
        {
          attributes: {
            'graphql.operation.type': labels.operationType,
            'graphql.operation.name': labels.operationName,
          },
        },
        parent,
      );
      operations.set(args.contextValue, trace.setSpan(parent, span));
      return {
        onExecuteDone({ result }) {
          const errors = 'errors' in result ? result.errors : undefined;
          if (errors?.length) span.setStatus({ code: SpanStatusCode.ERROR, message: 'graphql errors' });
          span.end();
        },
      };
    },
  };
}
