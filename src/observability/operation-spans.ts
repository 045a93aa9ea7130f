import {
  type Attributes,
  type Context as OtelContext,
  type Span,
  SpanKind,
  SpanStatusCode,
  context,
  trace,
} from '@opentelemetry/api';
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';
import { activeTracer } from './tracing.js';

/** The span of the operation a GraphQL context is executing, for the root-field spans below it. */
const operationContexts = new WeakMap<object, OtelContext>();

/** The OpenTelemetry context of the request's operation span, else the active one. */
export function operationContext(graphqlContext: object): OtelContext {
  return operationContexts.get(graphqlContext) ?? context.active();
}

interface OperationSpanInfo {
  name: string;
  attributes: Attributes;
}

/** Span name and attributes per document and operation name: computed once, not per request. */
const infos = new WeakMap<DocumentNode, Map<string, OperationSpanInfo | null>>();

function spanInfo(
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationSpanInfo | null {
  let byName = infos.get(document);
  if (!byName) {
    byName = new Map();
    infos.set(document, byName);
  }
  const key = operationName ?? '';
  let info = byName.get(key);
  if (info === undefined) {
    const operation = getOperationAST(document, operationName);
    info = operation
      ? {
          name: `${operation.operation}.${operation.name?.value ?? 'anonymous'}`,
          attributes: {
            'graphql.execute.operationName': operation.name?.value ?? 'anonymous',
            'graphql.execute.operationType': operation.operation,
          },
        }
      : null;
    byName.set(key, info);
  }
  return info;
}

/**
 * One span per GraphQL operation (`query.Pack`), child of the request span, with the operation
 * type and name and nothing of the document, variables or result (they carry caller text). It
 * stands where the envelop OpenTelemetry plugin's span stood, at a fraction of its per-request
 * work: no document walk, no attribute objects built per request, and nothing at all under a
 * sampled-out request. Execution runs inside the span, so DataLoader statements nest below it.
 */
export function useOperationSpans(): Plugin {
  const start = (graphqlContext: object, document: DocumentNode, operationName?: string | null) => {
    const tracer = activeTracer();
    if (!tracer) return null;
    const parent = context.active();
    const parentSpan = trace.getSpan(parent);
    if (parentSpan && !parentSpan.isRecording()) return null;
    const info = spanInfo(document, operationName);
    if (!info) return null;
    const span = tracer.startSpan(
      info.name,
      { kind: SpanKind.INTERNAL, attributes: info.attributes },
      parent,
    );
    const active = trace.setSpan(parent, span);
    operationContexts.set(graphqlContext, active);
    return { span, active };
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const started = start(args.contextValue, args.document, args.operationName);
      if (!started) return;
      const { span, active } = started;
      setExecuteFn((a) => context.with(active, () => executeFn(a)));
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return endSpan(span, result);
          return { onNext: ({ result: r }) => markErrors(span, r), onEnd: () => span.end() };
        },
      };
    },
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const started = start(args.contextValue, args.document, args.operationName);
      if (!started) return;
      const { span, active } = started;
      setSubscribeFn((a) => context.with(active, () => subscribeFn(a)));
      return {
        onSubscribeError: () => span.setStatus({ code: SpanStatusCode.ERROR }),
        onSubscribeResult({ result }) {
          if (!isAsyncIterable(result)) return endSpan(span, result);
          return { onNext: ({ result: r }) => markErrors(span, r), onEnd: () => span.end() };
        },
      };
    },
  };
}

function endSpan(span: Span, result: ExecutionResult): undefined {
  markErrors(span, result);
  span.end();
  return undefined;
}

/** A failed operation's status names the first error's code, never its message. */
function markErrors(span: Span, result: ExecutionResult): void {
  const first = result.errors?.[0];
  if (!first) return;
  const code = first.extensions?.code;
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : 'GraphQLError' });
}
