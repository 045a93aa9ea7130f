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
 * Runs `work`; an error that means the database is unreachable, or that it refuses the write
 * (a standby, a namespace moved away), becomes UNAVAILABLE.
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
    throw error;
  }
}
