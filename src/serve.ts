import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { assertBindAllowed } from './auth/local-mode.js';
import type { Config } from './config.js';
import { createHttpServer } from './http.js';
import { createMcpHttpHandler } from './mcp/http.js';
import { startOtlpTracing } from './observability/tracing.js';

/** Starts the gateway and keeps it up until SIGTERM/SIGINT, then drains and closes the pool. */
export async function serve(config: Config): Promise<void> {
  assertBindAllowed(config);
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
    mcp: createMcpHttpHandler({
      gateway: app.gateway,
      authenticate: app.authenticate,
      logger,
      loopbackOnly: !config.tokensFile,
    }),
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const { port } = server.address() as AddressInfo;
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
    setTimeout(() => process.exit(1), 15_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
