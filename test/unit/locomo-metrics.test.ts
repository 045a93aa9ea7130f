import { describe, expect, it } from 'vitest';
import { aggregate, parseEvidence, percentile, scoreRanking } from '../../src/eval/metrics.js';

describe('LoCoMo harness metrics', () => {
  it('recall@k is the share of evidence turns in the top k; MRR uses the first one found', () => {
    const ranking = ['D1:1', 'D1:2', 'D1:3', 'D1:4', 'D1:5', 'D1:6', 'D2:1'];
    const s = scoreRanking(ranking, ['D1:6', 'D2:1', 'D9:9']);
    expect(s.recall[5]).toBe(0);
    expect(s.recall[10]).toBeCloseTo(2 / 3, 12);
    expect(s.reciprocalRank).toBeCloseTo(1 / 6, 12);
    expect(scoreRanking(ranking, ['D1:1']).reciprocalRank).toBe(1);
    expect(scoreRanking(ranking, ['D7:7']).reciprocalRank).toBe(0);
  });

  it('aggregates means', () => {
    const a = aggregate([scoreRanking(['x'], ['x']), scoreRanking(['y'], ['x'])]);
    expect(a).toEqual({
      questions: 2,
      recall: { 5: 0.5, 10: 0.5, 20: 0.5 },
      mrr: 0.5,
      coverage: { any: 0.5, all: 0.5 },
    });
  });

  it('coverage: some or all of the evidence within the cut-off (10 for search, a whole pack)', () => {
    const ranking = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'];
    expect(scoreRanking(ranking, ['b', 'k']).covered).toEqual({ any: true, all: false });
    expect(scoreRanking(ranking, ['b', 'k'], ranking.length).covered).toEqual({ any: true, all: true });
    expect(scoreRanking(ranking, ['k']).covered).toEqual({ any: false, all: false });
  });

  it('reads the evidence forms found in the data', () => {
    expect(parseEvidence(['D1:3'])).toEqual(['D1:3']);
    expect(parseEvidence(['D8:6; D9:17'])).toEqual(['D8:6', 'D9:17']);
    expect(parseEvidence(['D:11:26'])).toEqual(['D11:26']);
    expect(parseEvidence(['D', 'D1:3', 'D1:3'])).toEqual(['D', 'D1:3']);
    expect(parseEvidence(undefined)).toEqual([]);
  });

  it('percentiles by nearest rank', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
    expect(percentile([], 50)).toBe(0);
  });
});
