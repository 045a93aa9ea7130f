import type { ChangeKind, ChangeNotice } from '../db/change-outbox.js';

export type { ChangeKind, ChangeNotice, RemovedRow } from '../db/change-outbox.js';
export { noteChanges } from '../db/change-outbox.js';

export type ChangeListener = (notice: ChangeNotice) => void;

/**
 * Committed changes fan out to live subscribers. Every write notes what it changed
 * (`noteChanges`); its transaction appends the notes to the `change_outbox` table before COMMIT
 * and wakes listeners. Each process reads the outbox from where it last read, so a write made by
 * another gateway is heard like one made here, and a missed wake-up loses nothing. Reading is
 * per process, shared by all subscribers.
 */
export interface ChangeFeed {
  /**
   * Returns the unsubscribe function; throws LIMIT_EXCEEDED when `principalId` already holds
   * its share of open subscriptions or the process holds all it may.
   */
  subscribe(listener: ChangeListener, principalId: string, onShutdown?: () => void): () => void;
  /**
   * An in-process consumer (not a client's subscription: no admission limit, not ended by
   * `endSubscriptions`). Returns the function that stops it.
   */
  observe(listener: ChangeListener): () => void;
  /** Ends every open subscription (each `onShutdown` is called); the feed still delivers to new ones. */
  endSubscriptions(): void;
  /** Open subscriptions in this process. */
  readonly active: number;
  /** Reads what committed since the last read now, instead of at the next wake-up or poll. */
  catchUp(): Promise<void>;
  close(): Promise<void>;
}

/** The notice for rows a statement created or updated, of one kind: their ids, or rows `RETURNING … AS id`. */
export function changedIds(
  namespace: string,
  kind: ChangeKind,
  ids: readonly string[] | readonly { id: string }[],
): ChangeNotice[] {
  return [{ namespace, kind, ids: ids.map((r) => (typeof r === 'string' ? r : r.id)), removed: [] }];
}

/** An `entities` row a statement wrote, as its notice needs it. */
export interface WrittenEntity {
  key: string;
  kind: string;
  /** content_hash IS NOT NULL: the row is a document. */
  document: boolean;
}

/**
 * The notices for written `entities` rows: documents and entities apart; an observation's graph
 * node (kind 'observation') is announced as its observation, not here.
 */
export function entityChanges(namespace: string, rows: readonly WrittenEntity[]): ChangeNotice[] {
  const shown = rows.filter((r) => r.kind !== 'observation');
  return [
    { namespace, kind: 'ENTITY', ids: shown.filter((r) => !r.document).map((r) => r.key), removed: [] },
    { namespace, kind: 'DOCUMENT', ids: shown.filter((r) => r.document).map((r) => r.key), removed: [] },
  ];
}
