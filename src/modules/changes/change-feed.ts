import { z } from 'zod';
import type { Database } from '../../db/database.js';
import { MemgateError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ChangeFeed, ChangeListener, ChangeNotice } from '../../kernel/change-notice.js';
import { CHANGE_CHANNEL } from './store/change-notify-store.js';

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

/** A notice as the database sent it, or null when it is not one of ours. */
export function parseNotice(payload: string): ChangeNotice | null {
  const parsed = noticeSchema.safeParse(safeJson(payload));
  return parsed.success ? parsed.data : null;
}

/** The feed of this database, or undefined when the backend cannot LISTEN. */
export async function createChangeFeed(
  db: Database,
  logger: Logger,
  limits: SubscriptionLimits,
): Promise<ChangeFeed | undefined> {
  if (!db.listen) return undefined;
  const fanOut = createFanOut();
  const admission = createAdmission(limits);
  const stop = await db.listen(CHANGE_CHANNEL, (payload) => {
    const notice = parseNotice(payload);
    if (notice) fanOut.deliver(notice);
    else logger.warn('ignored a malformed change notice');
  });
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
    async close() {
      endAll();
      fanOut.clear();
      await stop();
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
