import type { Database, Queryable } from '../db/database.js';
import { MemgateError } from '../errors.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { releaseSavepoint, rollbackToSavepoint, setSavepoint } from './store/savepoint-store.js';

/**
 * PARTIAL: the item was stored but part of it was not applied (an observation kept as
 * evidence while some or all of its assertions were rejected); its `assertions` say which.
 */
export type WriteStatus =
  | 'CREATED'
  | 'UPDATED'
  | 'UNCHANGED'
  | 'REINFORCED'
  | 'DUPLICATE'
  | 'PARTIAL'
  | 'REJECTED';

export interface AssertionResult {
  index: number;
  kind: string;
  status: 'APPLIED' | 'REJECTED';
  code?: string | null;
  message?: string | null;
}

export interface WriteResult {
  index: number;
  status: WriteStatus;
  id?: string | null;
  key?: string | null;
  code?: string | null;
  message?: string | null;
  /** One result per assertion of an observation that had any; absent otherwise. */
  assertions?: AssertionResult[] | null;
}

export interface WritePayload {
  results: WriteResult[];
  /** Items written in full (everything but PARTIAL and REJECTED). */
  accepted: number;
  /** Items stored with part of them rejected (status PARTIAL). */
  partial: number;
  rejected: number;
}

export function rejected(index: number, code: string, message: string, key?: string | null): WriteResult {
  return { index, status: 'REJECTED', code, message, key: key ?? null };
}

export function toPayload(results: WriteResult[]): WritePayload {
  const sorted = [...results].sort((a, b) => a.index - b.index);
  const rejectedCount = sorted.filter((r) => r.status === 'REJECTED').length;
  const partial = sorted.filter((r) => r.status === 'PARTIAL').length;
  return {
    results: sorted,
    accepted: sorted.length - rejectedCount - partial,
    partial,
    rejected: rejectedCount,
  };
}

/**
 * Writes each item inside one transaction, each under its own savepoint: an item that fails
 * rolls back only itself and comes back REJECTED, the others commit together.
 */
export async function writeEach<T>(
  db: Database,
  name: string,
  items: { index: number; value: T }[],
  write: (tx: Queryable, value: T, index: number) => Promise<WriteResult>,
  onUnexpected: (error: unknown) => void,
): Promise<WriteResult[]> {
  if (items.length === 0) return [];
  return db.transaction(name, (tx) => writeItems(tx, items, write, onUnexpected));
}

/** What an item that threw answers instead (after its savepoint was rolled back). */
export type ItemFailure<T> = (tx: Queryable, value: T, index: number, error: unknown) => Promise<WriteResult>;

/**
 * Runs `fn` under the savepoint `name`: released if `fn` succeeds, rolled back to (and the
 * error rethrown) if it throws, so a failing step undoes only itself and the transaction goes on.
 */
export async function withSavepoint<R>(
  tx: Queryable,
  name: string,
  fn: (tx: Queryable) => Promise<R>,
): Promise<R> {
  await setSavepoint(tx, name);
  try {
    const result = await fn(tx);
    await releaseSavepoint(tx, name);
    return result;
  } catch (error) {
    await rollbackToSavepoint(tx, name);
    throw error;
  }
}

/**
 * The per-item loop of `writeEach`, inside a transaction the caller holds. An item that throws
 * answers `onFailure` (by default its rejection).
 */
export async function writeItems<T>(
  tx: Queryable,
  items: readonly { index: number; value: T }[],
  write: (tx: Queryable, value: T, index: number) => Promise<WriteResult>,
  onUnexpected: (error: unknown) => void,
  onFailure?: ItemFailure<T>,
): Promise<WriteResult[]> {
  const results: WriteResult[] = [];
  for (const { index, value } of items) {
    try {
      results.push(await withSavepoint(tx, 'item', (q) => write(q, value, index)));
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      results.push(
        onFailure ? await onFailure(tx, value, index, error) : rejectionFor(index, error, onUnexpected),
      );
    }
  }
  return results;
}

export interface SetBasedOptions<T> {
  /** Told why the set-based write threw, before every item goes one by one; default onUnexpected. */
  onBulkFailure?: (error: unknown) => void;
  /** What an item of the one-by-one path that throws answers; by default its rejection. */
  onItemFailure?: ItemFailure<T>;
}

/**
 * A set-based write of many items under one savepoint. `bulk` answers every item or marks some
 * for the one-by-one path (null); if it throws, everything it wrote is rolled back and every
 * item takes the one-by-one path, so a bad row never costs the others.
 */
export async function writeSetBased<T>(
  tx: Queryable,
  items: readonly { index: number; value: T }[],
  bulk: (tx: Queryable, items: readonly { index: number; value: T }[]) => Promise<(WriteResult | null)[]>,
  one: (tx: Queryable, value: T, index: number) => Promise<WriteResult>,
  onUnexpected: (error: unknown) => void,
  options: SetBasedOptions<T> = {},
): Promise<WriteResult[]> {
  if (items.length === 0) return [];
  let answers: (WriteResult | null)[];
  try {
    answers = await withSavepoint(tx, 'batch', (q) => bulk(q, items));
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    (options.onBulkFailure ?? onUnexpected)(error);
    return writeItems(tx, items, one, onUnexpected, options.onItemFailure);
  }
  const done = answers.filter((a): a is WriteResult => a !== null);
  const rest = items.filter((_, i) => answers[i] === null);
  return [...done, ...(await writeItems(tx, rest, one, onUnexpected, options.onItemFailure))];
}

/** Expected errors keep their code and message; anything else is masked as INTERNAL. */
export function rejectionFor(
  index: number,
  error: unknown,
  onUnexpected: (error: unknown) => void,
): WriteResult {
  if (isDatabaseUnavailable(error)) throw error;
  if (error instanceof MemgateError) return rejected(index, error.code, error.message);
  onUnexpected(error);
  return rejected(index, 'INTERNAL', 'The item could not be written; nothing of it was kept.');
}
