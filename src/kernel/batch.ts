import type { Database, Queryable } from '../db/database.js';
import { MemgateError } from '../errors.js';

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

/** The per-item loop of `writeEach`, inside a transaction the caller holds. */
export async function writeItems<T>(
  tx: Queryable,
  items: readonly { index: number; value: T }[],
  write: (tx: Queryable, value: T, index: number) => Promise<WriteResult>,
  onUnexpected: (error: unknown) => void,
): Promise<WriteResult[]> {
  const results: WriteResult[] = [];
  for (const { index, value } of items) {
    await tx.query('SAVEPOINT item');
    try {
      results.push(await write(tx, value, index));
      await tx.query('RELEASE SAVEPOINT item');
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT item');
      results.push(rejectionFor(index, error, onUnexpected));
    }
  }
  return results;
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
): Promise<WriteResult[]> {
  if (items.length === 0) return [];
  await tx.query('SAVEPOINT batch');
  let answers: (WriteResult | null)[];
  try {
    answers = await bulk(tx, items);
    await tx.query('RELEASE SAVEPOINT batch');
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT batch');
    onUnexpected(error);
    return writeItems(tx, items, one, onUnexpected);
  }
  const done = answers.filter((a): a is WriteResult => a !== null);
  const rest = items.filter((_, i) => answers[i] === null);
  return [...done, ...(await writeItems(tx, rest, one, onUnexpected))];
}

/** Expected errors keep their code and message; anything else is masked as INTERNAL. */
export function rejectionFor(
  index: number,
  error: unknown,
  onUnexpected: (error: unknown) => void,
): WriteResult {
  if (error instanceof MemgateError) return rejected(index, error.code, error.message);
  onUnexpected(error);
  return rejected(index, 'INTERNAL', 'The item could not be written; nothing of it was kept.');
}
