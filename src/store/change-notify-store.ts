import type { Queryable } from '../db/database.js';

/** The LISTEN/NOTIFY channel committed changes travel on between gateway replicas. */
export const CHANGE_CHANNEL = 'memgate_changes';

/** NOTIFY payloads are limited to 8000 bytes; ids are split into notices well below it. */
const MAX_PAYLOAD_BYTES = 7000;

/** Sends one NOTIFY per payload chunk, all in one statement. Payloads hold ids only. */
export async function notifyChanges(db: Queryable, payloads: readonly string[]): Promise<void> {
  const oversized = payloads.find((p) => Buffer.byteLength(p) > MAX_PAYLOAD_BYTES);
  if (oversized) throw new Error('change payload exceeds the NOTIFY limit');
  if (payloads.length === 0) return;
  await db.query('/* notifyChanges */ SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
    CHANGE_CHANNEL,
    payloads,
  ]);
}

export const NOTIFY_PAYLOAD_BUDGET = MAX_PAYLOAD_BYTES;
