/** A FIFO async lock: PGlite has one connection, so a transaction must not interleave with anything. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  /** Callers holding or waiting for the lock (the PGlite queue depth on /metrics). */
  private queued = 0;
  /** Told how long each caller waited for the lock, in ms; unset keeps the fast path clock-free. */
  onWait: ((ms: number) => void) | undefined;

  get depth(): number {
    return Math.max(0, this.queued - 1);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.queued += 1;
    const onWait = this.onWait;
    const started = onWait ? performance.now() : 0;
    await previous;
    onWait?.(performance.now() - started);
    try {
      return await fn();
    } finally {
      this.queued -= 1;
      release();
    }
  }
}
