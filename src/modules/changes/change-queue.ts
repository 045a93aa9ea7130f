/**
 * A bounded queue read as an async iterator. `push` never blocks the writer: when the reader
 * falls `capacity` items behind, the queue stops accepting, counts what it dropped, and the
 * reader gets the items still queued followed by one overflow marker, then the end.
 * Memory per subscriber is therefore at most `capacity` items, whatever the write rate.
 */
export interface Overflow {
  overflow: true;
  dropped: number;
}

/** The subscriber's credentials no longer hold (token revoked or its rights changed). */
export interface Revoked {
  revoked: true;
}

/** The server is shutting down: the subscriber should subscribe again (to another instance). */
export interface Shutdown {
  shutdown: true;
}

/** What ends a stream early: the reader gets it after the items already queued. */
export type Ending = Overflow | Revoked | Shutdown;

export class ChangeQueue<T> implements AsyncIterableIterator<T | Ending> {
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T | Ending>) => void) | null = null;
  private dropped = 0;
  private finished = false;
  private ending: Revoked | Shutdown | null = null;

  constructor(
    private readonly capacity: number,
    private readonly onClose: () => void,
  ) {}

  /** False once the queue has overflowed or closed; the item is then only counted. */
  push(item: T): boolean {
    if (this.finished || this.ending) return false;
    if (this.dropped > 0 || this.items.length >= this.capacity) {
      this.dropped += 1;
      this.wake();
      return false;
    }
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
    return true;
  }

  /** Ends the stream with `reason` once the reader has what was queued; nothing more is accepted. */
  end(reason: Revoked | Shutdown): void {
    if (this.finished || this.ending) return;
    this.ending = reason;
    this.wake();
  }

  get pending(): number {
    return this.items.length;
  }

  next(): Promise<IteratorResult<T | Ending>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.ending && !this.finished) {
      const ending = this.ending;
      this.close();
      return Promise.resolve({ value: ending, done: false });
    }
    if (this.dropped > 0 && !this.finished) {
      const dropped = this.dropped;
      this.close();
      return Promise.resolve({ value: { overflow: true, dropped }, done: false });
    }
    if (this.finished) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T | Ending>> {
    this.close();
    this.items.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private wake(): void {
    // The reader is idle only when the queue is empty; an overflow or an ending must reach it.
    if (!this.waiting) return;
    const resolve = this.waiting;
    this.waiting = null;
    void this.next().then(resolve);
  }

  private close(): void {
    if (this.finished) return;
    this.finished = true;
    this.onClose();
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: undefined, done: true });
    }
  }
}
