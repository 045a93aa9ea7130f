import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Database } from './db/database.js';
import type { Logger } from './logger.js';
import type { Gateway } from './server.js';
import { pendingMigrations } from './store/migrate.js';

export interface HttpOptions {
  gateway: Gateway;
  db: Database;
  logger: Logger;
  maxBodyBytes: number;
}

/** Routes /healthz and /readyz itself, refuses oversized bodies, and hands the rest to yoga. */
export function createHttpServer(options: HttpOptions): Server {
  const { gateway, db, logger, maxBodyBytes } = options;
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      void readiness(db).then(
        (pending) =>
          pending.length === 0
            ? sendJson(res, 200, { status: 'ready', backend: db.backend })
            : sendJson(res, 503, { status: 'migrations pending', pending }),
        (error: unknown) => {
          logger.warn('readiness check failed', { error: String(error) });
          sendJson(res, 503, { status: 'database unreachable' });
        },
      );
      return;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      req.resume();
      return sendJson(res, 413, {
        errors: [
          { message: `Request body exceeds ${maxBodyBytes} bytes.`, extensions: { code: 'LIMIT_EXCEEDED' } },
        ],
      });
    }
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBodyBytes && !res.headersSent) {
        sendJson(res, 413, {
          errors: [
            {
              message: `Request body exceeds ${maxBodyBytes} bytes.`,
              extensions: { code: 'LIMIT_EXCEEDED' },
            },
          ],
        });
        req.destroy();
      }
    });
    void gateway.handle(req, res);
  });
}

async function readiness(db: Database): Promise<string[]> {
  await db.query('/* readiness */ SELECT 1');
  return pendingMigrations(db);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
