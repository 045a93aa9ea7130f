import { describe, expect, it } from 'vitest';
import { countCodePoints, estimateTokens } from '../../src/domain/tokens.js';

describe('estimateTokens', () => {
  it('is ceil(chars / 3) by default', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(1);
    expect(estimateTokens('abcd')).toBe(2);
    expect(estimateTokens('Привет, мир')).toBe(4);
  });

  it('counts Unicode code points, so an emoji is one character, not two', () => {
    expect(countCodePoints('😀😀😀')).toBe(3);
    expect(estimateTokens('😀😀😀')).toBe(1);
    expect(countCodePoints('a\ud800b')).toBe(3);
  });

  it('honours a custom ratio and rejects a non-positive one', () => {
    expect(estimateTokens('abcdefgh', 4)).toBe(2);
    expect(estimateTokens('abcdefghi', 4)).toBe(3);
    expect(() => estimateTokens('abc', 0)).toThrow(RangeError);
    expect(() => estimateTokens('abc', Number.NaN)).toThrow(RangeError);
  });
});
