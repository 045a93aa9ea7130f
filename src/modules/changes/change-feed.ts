import { z } from 'zod';
import { CHANGE_CHANNEL } from '../../db/change-outbox.js';
import { type Database, type Queryable, forWrites } from '../../db/database.js';
import { MemgateError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ChangeFeed, ChangeListener, ChangeNotice } from '../../kernel/change-notice.js';
import { changesSince, outboxSnapshot, pruneOutbox } from './store/change-outbox-store.js';

/** How many subscriptions may be open at once, per principal and in the whole process. */
export interface SubscriptionLimits {
  perPrincipal: number;
  perProcess: number;
}

/** Counts open subscriptions per principal; refuses one beyond either limit. */
function createAdmission(limits: SubscriptionLimits) {
  const held = new Map<string, number>();
  let total = 0;
  return {
    get total() {
      return total;
    },
    admit(principalId: string): () => void {
      const mine = held.get(principalId) ?? 0;
      if (mine >= limits.perPrincipal) {
        throw new MemgateError(
          'LIMIT_EXCEEDED',
          `At most ${limits.perPrincipal} subscriptions may be open per principal; close one first.`,
          { limit: limits.perPrincipal },
        );
      }
      if (total >= limits.perProcess) {
        throw new MemgateError(
          'LIMIT_EXCEEDED',
          `This server holds its maximum of ${limits.perProcess} open subscriptions; try again later.`,
          { limit: limits.perProcess },
        );
      }
      held.set(principalId, mine + 1);
      total += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (held.get(principalId) ?? 1) - 1;
        if (left > 0) held.set(principalId, left);
        else held.delete(principalId);
      };
    },
  };
}

/** In-process fan-out: a throwing listener cannot stop the others. */
function createFanOut() {
  const listeners = new Set<ChangeListener>();
  return {
    deliver(notice: ChangeNotice) {
      for (const listener of [...listeners]) {
        try {
          listener(notice);
        } catch {
          // A listener only enqueues; its own queue reports overflow.
        }
      }
    },
    subscribe(listener: ChangeListener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    clear: () => listeners.clear(),
  };
}

const noticeSchema = z.object({
  namespace: z.string(),
  kind: z.enum(['ENTITY', 'FACT', 'OBSERVATION', 'DOCUMENT']),
  ids: z.array(z.string()),
  removed: z
    .array(
      z.object({
        id: z.string(),
        vis: z.array(z.array(z.string()).nullable()),
        refs: z.array(z.string()),
      }),
    )
    .default([]),
});

/** An outbox row as a notice, or null when it is not one of ours. */
export function parseNotice(row: unknown): ChangeNotice | null {
  const parsed = noticeSchema.safeParse(row);
  return parsed.success ? parsed.data : null;
}

/** How often a feed reads the outbox without a wake-up (a listener down, another gateway's write missed). */
const POLL_MS = 1_000;
/** Outbox rows are kept this long: a feed that could not read for longer loses its place. */
export const OUTBOX_RETENTION_S = 3_600;
const PRUNE_MS = 60_000;

/**
 * Reads what committed since the last read, one read at a time: a wake-up during a read asks for
 * one more. A failed read (the database unreachable) keeps the place, so the next one catches up.
 */
function createOutboxReader(q: Queryable, logger: Logger, deliver: (notice: ChangeNotice) => void) {
  let snapshot: string | null = null;
  let reading: Promise<void> | null = null;
  let again = false;
  const readOnce = async () => {
    if (snapshot === null) {
      snapshot = await outboxSnapshot(q);
      return;
    }
    const read = await changesSince(q, snapshot);
    snapshot = read.snapshot;
    for (const row of read.notices) {
      const notice = parseNotice(row);
      if (notice) deliver(notice);
      else logger.warn('ignored a malformed change notice');
    }
  };
  const wake = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      do {
        again = false;
        await readOnce().catch((error: unknown) => {
          logger.warn('could not read the change outbox; retrying', { error: String(error) });
        });
      } while (again);
      reading = null;
    })();
    return reading;
  };
  return { start: readOnce, wake, settled: () => reading ?? Promise.resolve() };
}

/** The feed of this database, or undefined when the backend cannot LISTEN. */
export async function createChangeFeed(
  db: Database,
  logger: Logger,
  limits: SubscriptionLimits,
): Promise<ChangeFeed | undefined> {
  if (!db.listen) return undefined;
  const q = forWrites(db);
  const fanOut = createFanOut();
  const admission = createAdmission(limits);
  const reader = createOutboxReader(q, logger, fanOut.deliver);
  await reader.start();
  const stopListening = await db.listen(CHANGE_CHANNEL, () => void reader.wake());
  const poll = setInterval(() => void reader.wake(), POLL_MS);
  const prune = setInterval(() => {
    pruneOutbox(q, OUTBOX_RETENTION_S).catch((error: unknown) => {
      logger.warn('could not prune the change outbox', { error: String(error) });
    });
  }, PRUNE_MS);
  poll.unref();
  prune.unref();
  const shutdownHooks = new Set<() => void>();
  const endAll = () => {
    for (const hook of [...shutdownHooks]) hook();
  };
  return {
    subscribe(listener, principalId, onShutdown) {
      const release = admission.admit(principalId);
      const unsubscribe = fanOut.subscribe(listener);
      if (onShutdown) shutdownHooks.add(onShutdown);
      return () => {
        if (onShutdown) shutdownHooks.delete(onShutdown);
        unsubscribe();
        release();
      };
    },
    observe: (listener) => fanOut.subscribe(listener),
    endSubscriptions: endAll,
    get active() {
      return admission.total;
    },
    catchUp: () => reader.wake(),
    async close() {
      clearInterval(poll);
      clearInterval(prune);
      endAll();
      fanOut.clear();
      await stopListening();
      await reader.settled();
    },
  };
}
