import { GraphQLError, type GraphQLSchema } from 'graphql';
import type { Principal } from '../auth/principal.js';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { AppDeps } from '../kernel/request-scope.js';
import { DEFAULT_LIMITS, useQueryLimits } from './limits.js';
import { loadPersistedOperations, usePersistedOperations } from './persisted-operations.js';
import { flushPiiAccess, maskResultData, piiAuditSchema } from './pii-masking.js';
import { useProductionHardening } from './production.js';

/**
 * The gateway's hardening, in the order it applies: persisted operations (what may run at
 * all), limits (how big it may be), production mode (what may be discovered), the PII access
 * audit (written before the response leaves), and coded bodies on HTTP-level refusals.
 */
export function securityPlugins(deps: AppDeps): Plugin[] {
  const { config } = deps;
  const plugins: Plugin[] = [];
  if (config.persistedOperations) {
    plugins.push(usePersistedOperations(loadPersistedOperations(config.persistedOperations)));
  }
  plugins.push(
    useQueryLimits({
      ...DEFAULT_LIMITS,
      maxDepth: config.maxDepth,
      maxAliases: config.maxAliases,
      maxCost: config.maxCost,
      maxListSize: config.maxListSize,
    }),
  );
  if (config.production) plugins.push(useProductionHardening());
  plugins.push(usePiiProtection(deps), useCodedHttpErrors(), useCodedErrors(), useParseErrorsAsBadRequest());
  return plugins;
}

/**
 * PII on the way out (see pii-masking.ts). A principal without `pii` gets the result masked
 * once, where it leaves; an audited `pii` principal runs on the schema copy whose text fields
 * note what they serve, and the request's `pii_access` records are written after execution
 * and before the response. Fails closed: if the audit cannot be written, the unmasked data is
 * not sent.
 */
export function usePiiProtection(deps: Pick<AppDeps, 'db' | 'logger'>): Plugin {
  const auditSchemas = new WeakMap<GraphQLSchema, GraphQLSchema>();
  const auditSchemaOf = (schema: GraphQLSchema) => {
    let audited = auditSchemas.get(schema);
    if (!audited) {
      audited = piiAuditSchema(schema);
      auditSchemas.set(schema, audited);
    }
    return audited;
  };
  /** Null when the audit is written; otherwise the result that replaces the unmasked one. */
  const audit = async (principal: Principal, operation: string | null) => {
    try {
      await flushPiiAccess(principal, deps.db, operation);
      return null;
    } catch (error) {
      deps.logger.error('pii_access audit failed; response withheld', { error: String(error) });
      return {
        errors: [
          new GraphQLError('The audit log could not be written, so personal data was not served.', {
            extensions: { code: 'UNAVAILABLE', http: { status: 503 } },
          }),
        ],
      };
    }
  };
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn(async (args) => {
        const principal = principalOf(args.contextValue);
        if (!principal.pii) {
          const result = await executeFn(args);
          if (isSingleResult(result))
            maskResultData(args.schema, args.document, args.operationName, result.data);
          return result;
        }
        if (!principal.requestAudit?.auditPii) return executeFn(args);
        const result = await executeFn({ ...args, schema: auditSchemaOf(args.schema) });
        return (await audit(principal, args.operationName ?? operationNameOf(args.document))) ?? result;
      });
    },
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn((args) => {
        const principal = principalOf(args.contextValue);
        const audited = principal.pii && principal.requestAudit?.auditPii;
        return subscribeFn(audited ? { ...args, schema: auditSchemaOf(args.schema) } : args);
      });
      return {
        onSubscribeResult: ({ args }) => {
          const principal = principalOf(args.contextValue);
          if (!principal.pii) {
            return {
              onNext: ({ result }) => {
                if (isSingleResult(result))
                  maskResultData(args.schema, args.document, args.operationName, result.data);
              },
            };
          }
          if (!principal.requestAudit?.auditPii) return undefined;
          // A subscription serves data event by event: each event's PII is audited before it leaves.
          return {
            onNext: async ({ setResult }) => {
              const withheld = await audit(principal, args.operationName ?? operationNameOf(args.document));
              if (withheld) setResult(withheld);
            },
          };
        },
      };
    },
  };
}

function principalOf(context: unknown): Principal {
  return (context as Context).principal;
}

function isSingleResult(result: unknown): result is { data?: Record<string, unknown> | null } {
  return result !== null && typeof result === 'object' && !(Symbol.asyncIterator in result);
}

function operationNameOf(document: { definitions: readonly { kind: string; name?: { value: string } }[] }) {
  const op = document.definitions.find((d) => d.kind === 'OperationDefinition');
  return op?.name?.value ?? null;
}

/**
 * The last word on every result: an error that reached this point without a code (yoga's own
 * request errors, graphql-js errors from paths other plugins do not see, such as an operation
 * type the schema lacks) is the request's fault, so it leaves as BAD_USER_INPUT.
 */
export function useCodedErrors(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(withCodes));
      else if (result && typeof result === 'object' && 'errors' in result) setResult(withCodes(result));
    },
  };
}

function withCodes<T extends { errors?: readonly unknown[] }>(result: T): T {
  if (!result.errors?.some((e) => !hasCode(e))) return result;
  return {
    ...result,
    errors: result.errors.map((error) => {
      if (hasCode(error)) return error;
      const e = error as GraphQLError;
      return new GraphQLError(e.message, {
        nodes: e.nodes,
        source: e.source,
        positions: e.positions,
        path: e.path,
        originalError: e.originalError,
        extensions: { ...e.extensions, code: 'BAD_USER_INPUT' },
      });
    }),
  };
}

function hasCode(error: unknown): boolean {
  return typeof (error as { extensions?: { code?: unknown } }).extensions?.code === 'string';
}

const HTTP_CODES: Record<number, [string, string]> = {
  404: ['NOT_FOUND', 'Not found: the GraphQL endpoint is /graphql.'],
  405: ['BAD_REQUEST', 'Method not allowed: use GET for queries or POST.'],
  406: ['BAD_REQUEST', 'Not acceptable: accept application/graphql-response+json or application/json.'],
  415: ['BAD_REQUEST', 'Unsupported content type: send application/json.'],
};

/** Refusals yoga answers with an empty body get a GraphQL-shaped one with a code. */
export function useCodedHttpErrors(): Plugin {
  return {
    onResponse({ response, setResponse, fetchAPI }) {
      const coded = HTTP_CODES[response.status];
      if (!coded || response.body !== null) return;
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      setResponse(
        new fetchAPI.Response(
          JSON.stringify({ errors: [{ message: coded[1], extensions: { code: coded[0] } }] }),
          { status: response.status, statusText: response.statusText, headers },
        ),
      );
    },
  };
}

/**
 * yoga answers a POST body that is not JSON with 400, but its GET parser lets JSON.parse of the
 * `variables` and `extensions` parameters throw, which would leave as an internal error: any
 * SyntaxError while reading the request is the request's fault.
 */
export function useParseErrorsAsBadRequest(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          throw new GraphQLError(`Request parameters are not valid JSON: ${error.message.slice(0, 200)}`, {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        }
      });
    },
  };
}
