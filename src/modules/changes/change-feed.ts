import { z } from 'zod';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../logger.js';
import type { ChangeFeed, ChangeListener, ChangeNotice } from '../../kernel/change-notice.js';
import { CHANGE_CHANNEL } from './store/change-notify-store.js';

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
export async function createChangeFeed(db: Database, logger: Logger): Promise<ChangeFeed | undefined> {
  if (!db.listen) return undefined;
  const fanOut = createFanOut();
  const stop = await db.listen(CHANGE_CHANNEL, (payload) => {
    const notice = parseNotice(payload);
    if (notice) fanOut.deliver(notice);
    else logger.warn('ignored a malformed change notice');
  });
  return {
    subscribe: (listener) => fanOut.subscribe(listener),
    async close() {
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
