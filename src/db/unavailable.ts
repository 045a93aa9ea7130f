import { MemgateError } from '../errors.js';

/**
 * Connection-level SQLSTATEs: the connection or the server went away (class 08, an
 * administrator or crash shutdown, a server still starting), or no connection may be opened.
 */
const LOST_STATES = /^(08|57P0[1-3]|53300)/;

/** Errors node-postgres and the socket raise when a connection breaks under a statement. */
const LOST_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/i;
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/** Whether `error` means the database could not be reached, rather than that a statement failed. */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (LOST_STATES.test(code) || SOCKET_CODES.has(code))) return true;
  return LOST_MESSAGES.test(error.message);
}

/**
 * What a caller is told when the database is unreachable (a restart, a failover, a dropped
 * connection): UNAVAILABLE with HTTP 503, safe to retry once the database is back. The pool
 * drops broken connections and opens new ones on demand.
 */
export function databaseUnavailable(): MemgateError {
  return new MemgateError(
    'UNAVAILABLE',
    'The database is unreachable right now (its connection was lost or could not be opened). Retry shortly.',
    { retryable: true, http: { status: 503 } },
  );
}

/**
 * A write reached a server in recovery (SQLSTATE 25006): the primary it was is a standby now (a
 * failover), or the statement was sent to a replica. Told as UNAVAILABLE, reason READ_ONLY.
 */
export function isWriteRefused(error: unknown): boolean {
  if (error instanceof MemgateError) return error.extensions.reason === 'READ_ONLY';
  return (error as { code?: unknown } | null)?.code === '25006';
}

function databaseReadOnly(): MemgateError {
  return new MemgateError(
    'UNAVAILABLE',
    'The database accepts no writes right now (the server is a standby: a failover may be under way). Retry shortly.',
    { retryable: true, reason: 'READ_ONLY', http: { status: 503 } },
  );
}

/**
 * The database cannot serve this at all right now (unreachable, a standby refusing writes, a
 * namespace moved away): a batch fails as a whole and is retried as a whole, and a
 * subscription's re-read waits for it to pass.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return error instanceof MemgateError && error.code === 'UNAVAILABLE';
}

/** The SQLSTATE a namespace fenced by `memgate move` raises on any write to its rows. */
export const NAMESPACE_MOVED_STATE = 'MG001';

/** A write to a namespace fenced for a move: its rows live, or are about to live, on another server. */
function namespaceMoved(error: Error): MemgateError {
  return new MemgateError('UNAVAILABLE', error.message, {
    retryable: false,
    reason: 'NAMESPACE_MOVED',
    http: { status: 503 },
  });
}

/**
 * PostgreSQL chose this transaction as the victim of a deadlock (40P01) or could not serialise
 * it (40001): concurrent writers touched the same rows in different orders (two imports whose
 * turns re-index the same neighbours). The transaction is rolled back whole.
 */
function isWriteConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** Told as CONFLICT, reason WRITE_CONFLICT: nothing of the request was stored; sent again, it succeeds. */
export function writeConflict(): MemgateError {
  return new MemgateError(
    'CONFLICT',
    'A concurrent write touched the same rows and this request was rolled back; nothing of it was stored. Retry it.',
    { retryable: true, reason: 'WRITE_CONFLICT' },
  );
}

/**
 * Runs `work`; an error that means the database is unreachable, or that it refuses the write
 * (a standby, a namespace moved away), becomes UNAVAILABLE; a deadlock or serialisation
 * failure becomes CONFLICT (see `writeConflict`).
 */
export async function unlessUnreachable<T>(work: () => Promise<T>, connecting = false): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (connecting || isConnectionLoss(error)) throw databaseUnavailable();
    if (isWriteRefused(error)) throw databaseReadOnly();
    if (error instanceof Error && (error as { code?: unknown }).code === NAMESPACE_MOVED_STATE) {
      throw namespaceMoved(error);
    }
    if (isWriteConflict(error)) throw writeConflict();
    throw error;
  }
}
