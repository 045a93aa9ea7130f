import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { assertBindAllowed } from './auth/local-mode.js';
import type { Config } from './config.js';
import { createHttpServer } from './http.js';
import { attachWebSockets } from './websocket.js';

/** Starts the gateway and keeps it up until SIGTERM/SIGINT, then drains and closes the pool. */
export async function serve(config: Config): Promise<void> {
  assertBindAllowed(config);
  const app = await createApp(config);
  const { logger } = app.deps;
  const server = createHttpServer({
    gateway: app.gateway,
    authenticate: app.authenticate,
    db: app.deps.db,
    logger,
    maxBodyBytes: config.maxBodyBytes,
  });
  attachWebSockets(server, { gateway: app.gateway, authenticate: app.authenticate, logger });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const { port } = server.address() as AddressInfo;
  logger.info('memgate listening', {
    url: `http://${config.host}:${port}/graphql`,
    backend: app.deps.db.backend,
    auth: config.tokensFile ? 'tokens' : 'local (loopback only)',
    embedder: app.deps.embedder.model,
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    // close() stops accepting and waits for in-flight requests; idle keep-alives are cut.
    server.close(() => {
      void app.close().then(() => {
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
