import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Authenticate } from './auth/authenticate.js';
import type { Database } from './db/database.js';
import { BACKUP_PATH, handleBackup } from './http-backup.js';
import { handleExplore, isExplorePath } from './http-explorer.js';
import { handleGraphiQLAsset, isGraphiQLAssetPath } from './graphiql.js';
import type { Logger } from './logger.js';
import type { McpHttpHandler } from './mcp/http.js';
import { withRequestSpan } from './observability/tracing.js';
import { pendingMigrations, pingDatabase } from './kernel/store/migrate.js';

export interface HttpOptions {
  /** The yoga instance, or anything that answers a request the same way. */
  gateway: { handle(req: IncomingMessage, res: ServerResponse): unknown };
  /** The gateway's own authentication, for the routes served beside GraphQL (backups). */
  authenticate: Authenticate;
  db: Database;
  logger: Logger;
  maxBodyBytes: number;
  /** Time to receive a whole request; headers get at most 10 s of it. */
  requestTimeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open. Behind a load balancer it must exceed the
   * balancer's own idle timeout, or the balancer may send a request on a connection being closed.
   */
  keepAliveTimeoutMs: number;
  /** Answers /mcp (Model Context Protocol over Streamable HTTP). */
  mcp?: McpHttpHandler;
  /** Serve GraphiQL's assets under /graphiql/assets/ (where yoga serves its page: not in production). */
  graphiql?: boolean;
}

const HEADERS_TIMEOUT_MS = 10_000;

/**
 * Routes /healthz, /readyz, /admin/backup, /explore, /graphiql/assets and /mcp itself, refuses
 * oversized bodies, and hands the rest to yoga.
 */
export function createHttpServer(options: HttpOptions): Server {
  const {
    gateway,
    db,
    logger,
    maxBodyBytes,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    authenticate,
    mcp,
    graphiql,
  } = options;
  // A client that declares a body and never sends it (or trickles headers) is answered 408 and
  // cut off; Node checks the deadlines every `connectionsCheckingInterval`, hence the short one.
  const server = createServer({
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
    keepAliveTimeout: keepAliveTimeoutMs,
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') return answerReadiness(res, db, logger);
    if (isExplorePath(path) || (graphiql && isGraphiQLAssetPath(path))) {
      req.resume();
      const handle = isExplorePath(path) ? handleExplore : handleGraphiQLAsset;
      handle(req, res, path).catch((error: unknown) => {
        logger.error('static file request failed', { path, error: String(error) });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
      return;
    }
    if (path === BACKUP_PATH) {
      req.resume();
      void handleBackup(req, res, { db, authenticate, logger });
      return;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      req.resume();
      res.setHeader('connection', 'close');
      return sendJson(res, 413, {
        errors: [
          { message: `Request body exceeds ${maxBodyBytes} bytes.`, extensions: { code: 'LIMIT_EXCEEDED' } },
        ],
      });
    }
    // The body is read here, bounded, before yoga sees the request: a chunked body cannot slip
    // past the limit, and plugins may await (authentication) without losing body chunks.
    const chunks: Buffer[] = [];
    let received = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      received += chunk.length;
      if (received > maxBodyBytes) {
        refused = true;
        chunks.length = 0;
        res.setHeader('connection', 'close');
        sendJson(res, 413, {
          errors: [
            {
              message: `Request body exceeds ${maxBodyBytes} bytes.`,
              extensions: { code: 'LIMIT_EXCEEDED' },
            },
          ],
        });
        res.on('finish', () => req.destroy());
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => {
      refused = true;
    });
    req.on('end', () => {
      if (refused) return;
      // whatwg-node uses a pre-read `body` as the request body instead of the (consumed) stream.
      const body = received > 0 ? Buffer.concat(chunks) : null;
      if (path === '/mcp' && mcp) return mcp(req, res, body);
      if (body) (req as IncomingMessage & { body?: Buffer }).body = body;
      withRequestSpan(req, res, () => void gateway.handle(req, res));
    });
  });
  return server;
}

/** 200 once migrations are applied and change notices are heard; the replicas are reported, not required. */
function answerReadiness(res: ServerResponse, db: Database, logger: Logger): void {
  void readiness(db).then(
    (pending) => {
      if (pending.length > 0) return sendJson(res, 503, { status: 'migrations pending', pending });
      // Queries would answer, but live subscribers would hear nothing: not ready.
      const load = db.load?.();
      const listener = load?.listener;
      if (listener && !listener.listening) {
        return sendJson(res, 503, { status: 'change listener down', backend: db.backend, listener });
      }
      sendJson(res, 200, {
        status: 'ready',
        backend: db.backend,
        ...(load?.primary ? { primary: load.primary } : {}),
        ...(listener ? { listener } : {}),
        ...(load?.replicas ? { replicas: load.replicas } : {}),
      });
    },
    (error: unknown) => {
      logger.warn('readiness check failed', { error: String(error) });
      sendJson(res, 503, { status: 'database unreachable' });
    },
  );
}

async function readiness(db: Database): Promise<string[]> {
  await pingDatabase(db);
  return pendingMigrations(db);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
