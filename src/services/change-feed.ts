import { z } from 'zod';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { CHANGE_CHANNEL, NOTIFY_PAYLOAD_BUDGET, notifyChanges } from '../store/change-notify-store.js';
import type { WritePayload } from './batch.js';

/** What changed, as ids only: content never travels, every subscriber re-reads what it may see. */
export type ChangeKind = 'ENTITY' | 'FACT' | 'OBSERVATION' | 'DOCUMENT';

export interface ChangeNotice {
  namespace: string;
  kind: ChangeKind;
  /** Entity and document keys, fact ids, observation ids. */
  ids: string[];
}

export type ChangeListener = (notice: ChangeNotice) => void;

/**
 * Committed writes fan out to live subscribers. In one process (PGlite) the feed is a list of
 * listeners; on native PostgreSQL it is LISTEN/NOTIFY, so every replica hears every write.
 */
export interface ChangeFeed {
  publish(notice: ChangeNotice): void;
  /** Returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void;
  close(): Promise<void>;
}

/** In-process fan-out: a throwing listener cannot stop the others. */
export function createLocalFeed(): ChangeFeed & { deliver(notice: ChangeNotice): void } {
  const listeners = new Set<ChangeListener>();
  const deliver = (notice: ChangeNotice) => {
    for (const listener of [...listeners]) {
      try {
        listener(notice);
      } catch {
        // A listener only enqueues; its own queue reports overflow.
      }
    }
  };
  return {
    deliver,
    publish: deliver,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
    },
  };
}

const CHANGED = new Set(['CREATED', 'UPDATED', 'REINFORCED']);

/** The one call a write service makes after its transaction committed. */
export function publishWrites(
  feed: ChangeFeed | undefined,
  kind: ChangeKind,
  namespace: string,
  payload: WritePayload,
  extraIds: readonly string[] = [],
): WritePayload {
  if (!feed) return payload;
  const ids = payload.results.filter((r) => CHANGED.has(r.status) && r.key).map((r) => r.key as string);
  if (ids.length > 0) ids.push(...extraIds);
  if (ids.length > 0) feed.publish({ namespace, kind, ids: [...new Set(ids)] });
  return payload;
}

const noticeSchema = z.object({
  namespace: z.string(),
  kind: z.enum(['ENTITY', 'FACT', 'OBSERVATION', 'DOCUMENT']),
  ids: z.array(z.string()),
});

/** Splits a notice into JSON payloads that each fit one NOTIFY. */
export function noticePayloads(notice: ChangeNotice, budget = NOTIFY_PAYLOAD_BUDGET): string[] {
  const payloads: string[] = [];
  let ids: string[] = [];
  const encode = (list: string[]) => JSON.stringify({ ...notice, ids: list });
  for (const id of notice.ids) {
    if (Buffer.byteLength(encode([id])) > budget) continue; // cannot travel; no key is this long
    if (ids.length > 0 && Buffer.byteLength(encode([...ids, id])) > budget) {
      payloads.push(encode(ids));
      ids = [];
    }
    ids.push(id);
  }
  if (ids.length > 0) payloads.push(encode(ids));
  return payloads;
}

/**
 * LISTEN/NOTIFY on native PostgreSQL. Every replica, this one included, hears a write through
 * its own LISTEN connection, so a subscriber sees the same stream whichever replica it uses.
 * A failed NOTIFY is logged: the write has committed and stays; only the live view misses it.
 */
export async function createPostgresFeed(
  db: Database & { listen: NonNullable<Database['listen']> },
  logger: Logger,
): Promise<ChangeFeed> {
  const local = createLocalFeed();
  const stop = await db.listen(CHANGE_CHANNEL, (payload) => {
    const parsed = noticeSchema.safeParse(safeJson(payload));
    if (parsed.success) local.deliver(parsed.data);
    else logger.warn('ignored a malformed change notice');
  });
  return {
    publish(notice) {
      notifyChanges(db, noticePayloads(notice)).catch((error: unknown) =>
        logger.error('change notice not sent', { error: String(error) }),
      );
    },
    subscribe: (listener) => local.subscribe(listener),
    async close() {
      await local.close();
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

/** The feed for this database: NOTIFY-backed when the backend can LISTEN, in-process otherwise. */
export function createChangeFeed(db: Database, logger: Logger): Promise<ChangeFeed> | ChangeFeed {
  const listen = db.listen;
  if (listen) return createPostgresFeed(Object.assign(db, { listen }), logger);
  return createLocalFeed();
}
