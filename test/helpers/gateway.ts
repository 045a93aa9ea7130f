import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { type App, createApp } from '../../src/app.js';
import { type EnvInput, parseConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { createHttpServer } from '../../src/http.js';
import { attachWebSockets, closeWebSockets } from '../../src/websocket.js';
import { type LogLevel, createLogger } from '../../src/logger.js';
import { createMcpHttpHandler } from '../../src/mcp/http.js';
import { createHashingEmbedder } from '../../src/providers/hashing-embedder.js';
import type { ServerOptions } from '../../src/server.js';
import { TEST_EMBEDDING, openTestDatabase } from './test-database.js';

export interface GqlResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  extensions?: { sql?: { statements: number; ms: number } } & Record<string, unknown>;
}

export interface TestGateway {
  url: string;
  app: App;
  db: Database;
  /** Sends one GraphQL operation over real HTTP: a string, or a typed document from codegen. */
  gql<T = Record<string, unknown>, V = Record<string, unknown>>(
    query: string | TypedDocumentNode<T, V>,
    variables?: V,
    options?: { token?: string; headers?: Record<string, string> },
  ): Promise<GqlResponse<T>>;
  close(): Promise<void>;
}

/**
 * A real gateway on a loopback port over a fresh migrated database (PGlite, or native
 * PostgreSQL when DATABASE_URL is set), with SQL tracing on.
 */
function testLogLevel(): LogLevel {
  const level = process.env.MEMGATE_TEST_LOG_LEVEL;
  return level === 'debug' || level === 'info' || level === 'warn' || level === 'error' ? level : 'silent';
}

export async function startTestGateway(
  env: EnvInput = {},
  options: ServerOptions & {
    db?: Database;
    /** false: no background extraction worker, for a test that counts its model calls. */
    extractionWorker?: boolean;
  } = {},
  harness: { wrapDatabase?: (db: Database) => Database } = {},
): Promise<TestGateway> {
  const config = parseConfig({
    MEMGATE_TRACE_SQL: '1',
    MEMGATE_LOG_LEVEL: 'silent',
    MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
    MEMGATE_DATA_DIR: '.test-cache/data',
    // Summaries are refreshed in the background; tests of other features run without that work
    // arriving at unpredictable moments. Summary tests turn it on.
    MEMGATE_SUMMARIES: '0',
    ...env,
  });
  // A given database (a restored copy, say) is used as it is; the gateway closes it.
  const db = options.db ?? (await openTestDatabase());
  const served = harness.wrapDatabase ? harness.wrapDatabase(db) : db;
  const app = await createApp(config, {
    ...options,
    db: served,
    embedder: createHashingEmbedder(TEST_EMBEDDING.dimensions),
    // Silent unless a run asks (MEMGATE_TEST_LOG_LEVEL=warn): background work logs what it swallows.
    logger: createLogger(testLogLevel()),
  });
  const server: Server = createHttpServer({
    gateway: app.gateway,
    authenticate: app.authenticate,
    db: served,
    logger: app.deps.logger,
    maxBodyBytes: config.maxBodyBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    graphiql: !config.production,
    mcp: createMcpHttpHandler({
      gateway: app.gateway,
      authenticate: app.authenticate,
      logger: app.deps.logger,
      loopbackOnly: !config.tokensFile,
    }),
  });
  const wss = attachWebSockets(server, {
    gateway: app.gateway,
    authenticate: app.authenticate,
    logger: app.deps.logger,
    maxPayloadBytes: config.maxBodyBytes,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/graphql`;
  return {
    url,
    app,
    db,
    async gql(query, variables, opts = {}) {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...opts.headers,
        },
        body: JSON.stringify({ query: typeof query === 'string' ? query : print(query), variables }),
      });
      const body = (await res.json()) as GqlResponse;
      return { ...body, status: res.status } as GqlResponse<never>;
    },
    async close() {
      // As the server does on SIGTERM: subscriptions a test left open end instead of holding the close.
      app.deps.changes?.endSubscriptions();
      await Promise.all([
        closeWebSockets(wss, 0),
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
      ]);
      await app.close();
    },
  };
}
