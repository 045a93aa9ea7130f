import { describe, expect, it } from 'vitest';
import { ChannelRunner } from '../../src/modules/retrieval/pipeline/channel-runner.js';

describe('ChannelRunner', () => {
  it('reports candidates, weight and status of a channel that answers', async () => {
    const runner = new ChannelRunner({ pipeline: 'search', timeoutMs: 1000 });
    expect(await runner.run('lexical', 1, async () => [1, 2, 3])).toEqual([1, 2, 3]);
    expect(runner.report('lexical')).toMatchObject({ candidates: 3, weight: 1, status: 'ok' });
    expect(runner.warnings('the pack')).toEqual([]);
  });

  it('turns a failure into no candidates, a report without the driver message, and a warning', async () => {
    const seen: string[] = [];
    const runner = new ChannelRunner({ pipeline: 'search', timeoutMs: 1000, onError: (c) => seen.push(c) });
    const out = await runner.run('graph', 0.7, () =>
      Promise.reject(new Error('relation "x" does not exist')),
    );
    expect(out).toEqual([]);
    expect(runner.report('graph')).toMatchObject({
      candidates: 0,
      status: 'failed',
      error: 'channel failed',
    });
    expect(runner.warnings('the result')).toEqual([
      'channel_failed: graph (channel failed); the result is degraded',
    ]);
    expect(seen).toEqual(['graph']);
  });

  it('abandons a channel slower than the timeout', async () => {
    const runner = new ChannelRunner({ pipeline: 'search', timeoutMs: 20 });
    const slow = () => new Promise<number[]>((resolve) => setTimeout(() => resolve([1]), 500));
    expect(await runner.run('vector', 1, slow)).toEqual([]);
    expect(runner.report('vector')).toMatchObject({ status: 'timeout', error: 'timed out after 20 ms' });
    expect(runner.warnings('the pack')[0]).toMatch(/^channel_timeout: vector/);
  });

  it('starts every channel before any has finished (they run concurrently)', async () => {
    const runner = new ChannelRunner({ pipeline: 'search', timeoutMs: 1000 });
    let running = 0;
    let peak = 0;
    const channel = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 10));
      running -= 1;
      return [1];
    };
    await Promise.all([
      runner.run('a', 1, channel),
      runner.run('b', 1, channel),
      runner.run('c', 1, channel),
    ]);
    expect(peak).toBe(3);
  });
});
