import { afterEach, describe, expect, it } from 'vitest';
import { createProgress, formatAmount, formatBytes, formatRate } from '../../src/cli/progress.js';

function stream(): NodeJS.WriteStream & { text: string } {
  const s = {
    isTTY: false,
    text: '',
    write(chunk: string) {
      s.text += chunk;
      return true;
    },
  };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('progress lines', () => {
  const saved = process.env.MEMGATE_PROGRESS_MS;
  afterEach(() => {
    if (saved === undefined) delete process.env.MEMGATE_PROGRESS_MS;
    else process.env.MEMGATE_PROGRESS_MS = saved;
  });

  it('scales bytes to B, kB, MB and GB', () => {
    expect(formatBytes(3)).toBe('3 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1000)).toBe('1.0 kB');
    expect(formatBytes(84_321)).toBe('84 kB');
    expect(formatBytes(999_700)).toBe('1.0 MB');
    expect(formatBytes(12_345_678)).toBe('12 MB');
    expect(formatBytes(1_500_000_000)).toBe('1.5 GB');
    expect(formatRate(4_100_000, 'bytes')).toBe('4.1 MB/s');
    expect(formatRate(560.4, 'lines')).toBe('560 lines/s');
    expect(formatRate(2.46, 'jobs')).toBe('2.5 jobs/s');
    expect(formatAmount(1, 'records')).toBe('1 record');
    expect(formatAmount(2, 'records')).toBe('2 records');
    expect(formatAmount(2048, 'bytes')).toBe('2.0 kB');
  });

  it('prints nothing for a job that ends before the first line is due', () => {
    process.env.MEMGATE_PROGRESS_MS = '5000';
    const out = stream();
    const progress = createProgress('copy', out, 'bytes');
    progress.update(3);
    progress.update(300, 300);
    progress.done();
    expect(out.text).toBe('');
  });

  it('draws lines in scaled units once due, and completes a bar it started', async () => {
    process.env.MEMGATE_PROGRESS_MS = '30';
    const out = stream();
    const progress = createProgress('copy', out, 'bytes');
    await sleep(40);
    progress.update(2_500_000);
    await sleep(40);
    progress.update(5_000_000, 5_000_000);
    progress.done('done');
    const lines = out.text.trim().split('\n');
    expect(lines[0]).toMatch(/^copy {2}2\.5 MB {2}\d+(\.\d)? MB\/s$/);
    expect(lines[1]).toMatch(/^copy {2}\[#{24}\] 100% {2}5\.0 MB\/5\.0 MB {2}\d+(\.\d)? MB\/s$/);
    expect(lines[2]).toBe('done');
    expect(out.text).not.toMatch(/bytes/);
  });
});
