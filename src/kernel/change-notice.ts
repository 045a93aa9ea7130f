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

export type ChangeListener = (notice: ChangeNotice) => void;

/**
 * Committed changes fan out to live subscribers. The database announces them itself (triggers
 * NOTIFY on `memgate_changes`, migration 011), so every write path is covered and a write made
 * by another process or replica is heard like one made here. Listening is per process: one
 * LISTEN connection (native) or PGlite's in-process notifications, shared by all subscribers.
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
  close(): Promise<void>;
}
