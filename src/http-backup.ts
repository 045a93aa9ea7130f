import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticate } from './auth/authenticate.js';
import { LOCAL_PRINCIPAL, type Principal } from './auth/principal.js';
import type { Database } from './db/database.js';
import { DumpError, dumpDatabase } from './db/dump.js';
import type { Logger } from './logger.js';
import { appendAuditEntries } from './kernel/store/audit-store.js';
import { REGISTRY_AUDIT_NAMESPACE } from './modules/domain-packs/index.js';

export const BACKUP_PATH = '/admin/backup';

/**
 * A backup holds every namespace, every scope and unmasked personal data, so only a principal
 * that could read all of it anyway may take one: admin, `pii`, read `*`, every scope.
 */
export function mayBackUp(principal: Principal): boolean {
  return principal.admin && principal.pii && principal.scopes === null && principal.read.includes('*');
}

/**
 * GET /admin/backup streams `pg_dump` of the whole database. It is how `memgate backup --url`
 * works while this gateway holds the embedded folder, which no second process may open.
 */
export async function handleBackup(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { db: Database; authenticate: Authenticate; logger: Logger },
): Promise<void> {
  if (req.method !== 'GET') {
    res.setHeader('allow', 'GET');
    return sendError(res, 405, 'BAD_USER_INPUT', 'Use GET.');
  }
  let principal: Principal;
  try {
    principal = await deps.authenticate(toRequest(req));
  } catch (error) {
    const coded = (error as { extensions?: { code?: unknown } }).extensions?.code === 'UNAUTHENTICATED';
    if (!coded) deps.logger.error('authentication failed unexpectedly', { error: String(error) });
    res.setHeader('www-authenticate', 'Bearer realm="memgate"');
    return sendError(
      res,
      401,
      'UNAUTHENTICATED',
      'Authentication required: send "Authorization: Bearer <token>".',
    );
  }
  if (!mayBackUp(principal)) {
    return sendError(
      res,
      403,
      'FORBIDDEN',
      'A backup is for admin principals with pii, read "*" and every scope only.',
    );
  }
  try {
    if (principal !== LOCAL_PRINCIPAL) {
      await appendAuditEntries(deps.db, [
        {
          namespace: REGISTRY_AUDIT_NAMESPACE,
          principalId: principal.id,
          action: 'backup',
          target: null,
          summary: {},
        },
      ]);
    }
    const dump = await dumpDatabase(deps.db);
    res.writeHead(200, {
      'content-type': 'application/sql; charset=utf-8',
      'content-disposition': 'attachment; filename="memgate-backup.sql"',
      'cache-control': 'no-store',
    });
    dump.on('error', (error) => {
      deps.logger.error('backup stream failed', { error: error.message });
      res.destroy(error); // the client sees a cut stream, never a short "complete" file
    });
    dump.pipe(res);
  } catch (error) {
    deps.logger.error('backup failed', { error: (error as Error).message });
    const message =
      error instanceof DumpError && /not installed|cannot dump/.test(error.message)
        ? error.message
        : 'The backup failed; the gateway log has the reason.';
    sendError(res, 503, 'UNAVAILABLE', message);
  }
}

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://localhost${req.url ?? '/'}`, { headers });
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}
