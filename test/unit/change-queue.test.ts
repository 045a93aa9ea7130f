import { describe, expect, it } from 'vitest';
import { ChangeQueue } from '../../src/modules/changes/change-queue.js';

describe('ChangeQueue', () => {
  it('holds at most its capacity, then yields what it holds, one overflow marker, and ends', async () => {
    let closed = 0;
    const queue = new ChangeQueue<number>(3, () => {
      closed += 1;
    });
    const accepted = Array.from({ length: 1000 }, (_, i) => queue.push(i));
    expect(accepted.filter(Boolean)).toHaveLength(3);
    expect(queue.pending).toBe(3);
    const seen = [];
    for await (const item of queue) seen.push(item);
    expect(seen).toEqual([0, 1, 2, { overflow: true, dropped: 997 }]);
    expect(closed).toBe(1);
    expect(queue.push(5)).toBe(false);
  });

  it('a waiting reader gets items directly, and hears of an overflow', async () => {
    const queue = new ChangeQueue<number>(1, () => {});
    const first = queue.next();
    queue.push(1);
    expect(await first).toEqual({ value: 1, done: false });
    const second = queue.next();
    queue.push(2);
    expect(await second).toEqual({ value: 2, done: false });
    queue.push(3);
    queue.push(4);
    queue.push(5);
    expect((await queue.next()).value).toBe(3);
    expect((await queue.next()).value).toEqual({ overflow: true, dropped: 2 });
    expect((await queue.next()).done).toBe(true);
  });

  it('return() unsubscribes and drops what is queued', async () => {
    let closed = false;
    const queue = new ChangeQueue<number>(10, () => {
      closed = true;
    });
    queue.push(1);
    await queue.return();
    expect(closed).toBe(true);
    expect((await queue.next()).done).toBe(true);
  });
});
