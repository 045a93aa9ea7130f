import { AsyncLocalStorage } from 'node:async_hooks';
import type { Queryable } from './database.js';

/** What changed, as ids only: content never travels, every subscriber re-reads what it may see. */
export type ChangeKind = 'ENTITY' | 'FACT' | 'OBSERVATION' | 'DOCUMENT';

/** A removed row: it cannot be re-read, so the notice carries what visibility needs. */
export interface RemovedRow {
  id: string;
  /** Visibility arrays that must all admit the subscriber; null: an endpoint already gone. */
  vis: (string[] | null)[];
  /** The entity keys the row touched (for `entityKeys` filters). */
  refs: string[];
}

export interface ChangeNotice {
  namespace: string;
  kind: ChangeKind;
  /** Created or updated: entity and document keys, fact ids, observation ids. */
  ids: string[];
  removed: RemovedRow[];
}

/**
 * The channel that wakes every gateway's change feed after a commit that wrote the outbox. The
 * wake-up carries nothing: the feed reads what committed from the outbox itself, so a wake-up
 * missed (a listener reconnecting, a gateway starting) loses no change.
 */
export const CHANGE_CHANNEL = 'memgate_changes';

/** Ids per outbox row: a subscriber re-reads one row's ids together. */
const IDS_PER_ROW = 500;

interface Pending {
  notices: ChangeNotice[];
  open: boolean;
}

const pending = new AsyncLocalStorage<Pending>();

/**
 * Runs a transaction's work so that the changes it notes are written to the outbox by the same
 * transaction, in one statement just before COMMIT: a change is announced if and only if it
 * committed, whichever gateway wrote it and whichever gateway listens.
 */
export async function withChangeOutbox<T>(tx: Queryable, fn: () => Promise<T>): Promise<T> {
  const scope: Pending = { notices: [], open: true };
  const value = await pending.run(scope, fn);
  scope.open = false;
  await appendChanges(tx, scope.notices);
  return value;
}

/**
 * Notes rows a statement created, updated or removed. Inside a transaction the note joins its
 * commit; outside one (an autocommitted write) it is written at once, after the write.
 * Announcing a row that then rolls back to a savepoint is harmless: subscribers re-read it.
 */
export async function noteChanges(q: Queryable, notices: readonly ChangeNotice[]): Promise<void> {
  const live = notices.filter((n) => n.ids.length > 0 || n.removed.length > 0);
  if (live.length === 0) return;
  const scope = pending.getStore();
  if (scope?.open) scope.notices.push(...live);
  else await appendChanges(q, live);
}

async function appendChanges(q: Queryable, notices: readonly ChangeNotice[]): Promise<void> {
  if (notices.length === 0) return;
  await q.query(
    `/* appendChanges */
     WITH appended AS (
       INSERT INTO change_outbox (namespace, kind, ids, removed)
       SELECT n->>'namespace', n->>'kind', ARRAY(SELECT jsonb_array_elements_text(n->'ids')), n->'removed'
       FROM jsonb_array_elements($1::jsonb) AS n
       RETURNING 1)
     SELECT pg_notify('${CHANGE_CHANNEL}', '') FROM (SELECT 1 FROM appended LIMIT 1) AS any_appended`,
    [JSON.stringify(outboxRows(notices))],
  );
}

/** One row per namespace and kind, its ids in pieces of IDS_PER_ROW. */
export function outboxRows(notices: readonly ChangeNotice[]): ChangeNotice[] {
  const merged = new Map<string, ChangeNotice>();
  for (const n of notices) {
    const key = JSON.stringify([n.namespace, n.kind]);
    const into = merged.get(key);
    if (into) {
      into.ids.push(...n.ids);
      into.removed.push(...n.removed);
    } else
      merged.set(key, { namespace: n.namespace, kind: n.kind, ids: [...n.ids], removed: [...n.removed] });
  }
  const rows: ChangeNotice[] = [];
  for (const n of merged.values()) {
    const ids = [...new Set(n.ids)];
    for (let i = 0; i < ids.length || (i === 0 && n.removed.length > 0); i += IDS_PER_ROW) {
      rows.push({ ...n, ids: ids.slice(i, i + IDS_PER_ROW), removed: i === 0 ? n.removed : [] });
    }
  }
  return rows;
}
