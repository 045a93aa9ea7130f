import { type Plugin, createYoga } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import {
  type Authenticate,
  authenticatedPrincipal,
  localAuthenticate,
  useAuthentication,
} from './auth/authenticate.js';
import type { Principal } from './auth/principal.js';
import { bindRequestPrincipal } from './auth/request-principal.js';
import { type Context, createContext } from './context.js';
import { GRAPHIQL_OPTIONS, renderGraphiQLPage, useGraphiQLPageHeaders } from './graphiql.js';
import { useResponseCompression } from './http-compression.js';
import { errorFields } from './logger.js';
import { extractionMetrics } from './modules/extraction/index.js';
import { summaryMetrics } from './modules/summaries/index.js';
import { observabilityPlugins } from './observability/plugins.js';
import { useReadRouting } from './read-routing.js';
import { schema } from './schema/index.js';
import { securityPlugins } from './security/index.js';
import type { AppDeps } from './kernel/request-scope.js';

export type { Authenticate } from './auth/authenticate.js';

export interface ServerOptions {
  /** Resolves the principal of a request; defaults to the local full-access principal. */
  authenticate?: Authenticate;
  /** Extra yoga plugins (limits, persisted operations…). */
  plugins?: Plugin[];
}

/** Adds `extensions.sql = { statements, ms }` to every response when SQL tracing is on. */
function useSqlTrace(): Plugin<Context> {
  return {
    onExecute: () => ({
      onExecuteDone: ({ args, result, setResult }) => {
        if ('errors' in result || 'data' in result) {
          const { statements, ms } = args.contextValue.sql;
          setResult({
            ...result,
            extensions: {
              ...(result.extensions ?? {}),
              sql: { statements, ms: Math.round(ms * 1000) / 1000 },
            },
          });
        }
      },
    }),
  };
}

/**
 * A query or mutation stops when the client goes away, as yoga's own useExecutionCancellation
 * arranges, but on a native AbortSignal that follows the request's. The executor checks the signal
 * before every field, and the Node adapter's request signal is a Proxy whose every property
 * read runs a trap with a string search: 4% of the gateway's CPU on a 600-fact walk, against
 * one controller and one listener per request here.
 */
export function useExecutionCancellation(): Plugin {
  const follow = (context: unknown): AbortSignal | undefined => {
    const source = (context as { request?: Request } | undefined)?.request?.signal;
    if (!source) return undefined;
    const controller = new AbortController();
    if (source.aborted) controller.abort(source.reason);
    else source.addEventListener('abort', () => controller.abort(source.reason), { once: true });
    return controller.signal;
  };
  return {
    onExecute({ args }) {
      (args as { signal?: AbortSignal }).signal = follow(args.contextValue);
    },
    // Not for subscriptions: the executor races every event's result against one promise of
    // the signal, which never settles while the stream is open, so each event left a reaction
    // on it (about 1 KB an event, held until the client left). A subscription ends when its
    // client goes away through its stream's return(), which closes the change queue at once.
  };
}

/** Every error leaves with a stable code; GraphQL's own validation errors get theirs too. */
function useErrorCodes(): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length) return;
        setResult({ ...result, errors: result.errors.map(withCode) });
      },
    }),
    onValidate:
      () =>
      ({ result, setResult }) => {
        if (result.length) setResult(result.map(withCode));
      },
  };
}

function withCode(error: GraphQLError | Error): GraphQLError {
  if (!(error instanceof GraphQLError)) {
    return new GraphQLError(error.message, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  if (error.extensions?.code) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
  });
}

/** The request's credentials, asked again, still name a principal with the same rights. */
async function sameRights(
  authenticate: Authenticate,
  request: Request,
  principal: Principal,
): Promise<boolean> {
  try {
    return samePrincipal(await authenticate(request), principal);
  } catch {
    return false;
  }
}

function samePrincipal(now: Principal | null, principal: Principal): boolean {
  return now === principal || (now !== null && JSON.stringify(now) === JSON.stringify(principal));
}

export function createGateway(deps: AppDeps, options: ServerOptions = {}) {
  const authenticate = options.authenticate ?? localAuthenticate;
  // PII is masked where results leave, for principals without `pii` (security/index.ts).
  const gatewaySchema = schema;
  return createYoga<Record<string, unknown>, Context>({
    schema: gatewaySchema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // A small page naming GraphiQL's built, precompressed assets (src/graphiql.ts).
    graphiql: deps.config.production ? false : GRAPHIQL_OPTIONS,
    renderGraphiQL: renderGraphiQLPage,
    logging: false,
    // Bodies are bounded before yoga sees them: http.ts reads at most MEMGATE_MAX_BODY_BYTES and
    // WebSocket messages are capped at the same size. yoga's own limit would pipe every body
    // through a TransformStream again (tens of microseconds a request).
    maxRequestBodySize: false,
    // Authenticated in onRequestParse (useAuthentication); each request gets its own principal.
    context: ({ request }) => {
      const principal = authenticatedPrincipal(request);
      const { current } = authenticate;
      return createContext(deps, bindRequestPrincipal(principal), {
        stillAuthorized: () => sameRights(authenticate, request, principal),
        authorizedNow: current && (() => samePrincipal(current(request), principal)),
      });
    },
    maskedErrors: {
      maskError: (error, message) => {
        // Duck-typed: yoga and our code may load different copies of graphql's GraphQLError.
        const original = isGraphQLErrorLike(error) ? (error.originalError ?? undefined) : error;
        if (isGraphQLErrorLike(error) && (!original || hasCode(original))) {
          return error as GraphQLError;
        }
        // graphql's own input coercion (a variable of the wrong type, an Int out of range, an
        // unknown enum value) throws an uncoded GraphQLError: that is the caller's input.
        if (isGraphQLErrorLike(error) && isGraphQLErrorLike(original)) {
          return withCode(error as GraphQLError);
        }
        deps.logger.error('unexpected error', errorFields(original ?? error));
        const path = isGraphQLErrorLike(error) ? (error as GraphQLError).path : undefined;
        return new GraphQLError(message, { path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
      },
    },
    plugins: [
      // /metrics (admin-only when tokens are configured) and OpenTelemetry spans, if turned on.
      ...observabilityPlugins({
        schema: gatewaySchema,
        metricsEnabled: deps.config.metrics,
        db: deps.db,
        authenticate: options.authenticate,
        features: [extractionMetrics(deps.db), summaryMetrics(deps.db)],
      }),
      useAuthentication(authenticate, deps.logger),
      ...securityPlugins(deps),
      useExecutionCancellation(),
      ...[useReadRouting(deps)].filter((p) => p !== null),
      useErrorCodes(),
      ...(deps.config.traceSql ? [useSqlTrace()] : []),
      ...(options.plugins ?? []),
      // Last: they see the response every other plugin has settled.
      useGraphiQLPageHeaders(),
      useResponseCompression(),
    ],
  });
}

function isGraphQLErrorLike(value: unknown): value is { originalError?: unknown; path?: unknown } {
  return value instanceof Error && value.name === 'GraphQLError';
}

function hasCode(value: unknown): boolean {
  const extensions = (value as { extensions?: { code?: unknown } }).extensions;
  return typeof extensions?.code === 'string';
}

export type Gateway = ReturnType<typeof createGateway>;
