import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { createApp } from './app.js';
import { assertBindAllowed } from './auth/local-mode.js';
import type { Config } from './config.js';
import { recordLockAddress } from './db/data-dir-lock.js';
import { embeddedFolder } from './db/open-database.js';
import { createHttpServer } from './http.js';
import { createMcpHttpHandler } from './mcp/http.js';
import { startOtlpTracing } from './observability/tracing.js';
import { attachWebSockets, closeWebSockets } from './websocket.js';

/** Starts the gateway and keeps it up until SIGTERM/SIGINT, then drains and closes the pool. */
export async function serve(config: Config): Promise<void> {
  assertBindAllowed(config);
  // Before the database and the embedder: a taken port is reported in a moment, not after start-up.
  if (config.port !== 0) await listenOn(createServer(), config).then((probe) => closeServer(probe));
  // Before the gateway is built, so its plugins see the tracer provider.
  const tracing = config.otlpTracing ? await startOtlpTracing('memgate') : null;
  const app = await createApp(config);
  const { logger } = app.deps;
  const server = createHttpServer({
    gateway: app.gateway,
    authenticate: app.authenticate,
    db: app.deps.db,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    graphiql: !config.production,
    mcp: createMcpHttpHandler({
      gateway: app.gateway,
      authenticate: app.authenticate,
      logger,
      loopbackOnly: !config.tokensFile,
    }),
  });
  const wss = attachWebSockets(server, {
    gateway: app.gateway,
    authenticate: app.authenticate,
    logger,
    maxPayloadBytes: config.maxBodyBytes,
  });
  try {
    await listenOn(server, config);
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  // A process refused the embedded folder (memgate mcp, import) can then say where this one answers.
  if (app.deps.db.backend === 'pglite') {
    recordLockAddress(embeddedFolder(config), `http://${clientHost(config.host)}:${port}`);
  }
  logger.info('memgate listening', {
    url: `http://${config.host}:${port}/graphql`,
    backend: app.deps.db.backend,
    auth: config.tokensFile ? 'tokens' : 'local (loopback only)',
    embedder: app.deps.embedder.model,
    metrics: config.metrics ? `http://${config.host}:${port}/metrics` : 'off',
    tracing: tracing ? 'otlp' : 'off',
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    // close() stops accepting and waits for in-flight requests; idle keep-alives are cut.
    server.close(() => {
      void Promise.all([app.close(), tracing?.shutdown()]).then(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
    // Open subscriptions (SSE streams, WebSockets) would hold the close: each ends with
    // UNAVAILABLE, so that clients subscribe again, here once back or to another instance.
    app.deps.changes?.endSubscriptions();
    void closeWebSockets(wss);
    setTimeout(() => process.exit(1), 15_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Listens, or rejects with one sentence (never an unhandled 'error' event with a stack). */
function listenOn<S extends Server | ReturnType<typeof createServer>>(
  server: S,
  config: Pick<Config, 'host' | 'port'>,
): Promise<S> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const where = `${config.host}:${config.port}`;
      if (error.code === 'EADDRINUSE') {
        reject(new Error(`port ${where} is already in use (another memgate?); stop it or set MEMGATE_PORT`));
      } else if (error.code === 'EACCES') {
        reject(new Error(`no permission to listen on ${where}; choose MEMGATE_PORT above 1023`));
      } else reject(new Error(`cannot listen on ${where}: ${error.message}`));
    };
    server.once('error', onError);
    server.listen(config.port, config.host, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

/** The host a local client dials: a wildcard bind is reached on loopback. */
function clientHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function closeServer(server: { close(cb: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
