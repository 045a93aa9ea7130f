import { describe, expect, it } from 'vitest';
import { unseenVector } from '../../bench/scenarios/ingest-floor.js';

describe('the write floor', () => {
  it('re-inserts a vector the index has not seen, of the same dimensions and nearly the same direction', () => {
    const original = '[0.25,-0.5,0.125]';
    const nudged = unseenVector(original);
    expect(nudged).not.toBe(original);
    const a = original.slice(1, -1).split(',').map(Number);
    const b = nudged.slice(1, -1).split(',').map(Number);
    expect(b).toHaveLength(a.length);
    expect(b.slice(1)).toEqual(a.slice(1));
    expect(Math.abs(b[0]! - a[0]!)).toBeLessThan(1e-4);
  });

  it('leaves text that is not a vector as it is', () => {
    expect(unseenVector('[]')).toBe('[]');
    expect(unseenVector('[a,b]')).toBe('[a,b]');
  });
});
