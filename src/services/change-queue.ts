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

export class ChangeQueue<T> implements AsyncIterableIterator<T | Overflow> {
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T | Overflow>) => void) | null = null;
  private dropped = 0;
  private finished = false;

  constructor(
    private readonly capacity: number,
    private readonly onClose: () => void,
  ) {}

  /** False once the queue has overflowed or closed; the item is then only counted. */
  push(item: T): boolean {
    if (this.finished) return false;
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

  get pending(): number {
    return this.items.length;
  }

  next(): Promise<IteratorResult<T | Overflow>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
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

  return(): Promise<IteratorResult<T | Overflow>> {
    this.close();
    this.items.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private wake(): void {
    // The reader is idle only when the queue is empty; with dropped > 0 it must hear of it.
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
