import { describe, expect, it } from 'vitest';
import { fuse, scoreBonuses } from '../../src/modules/retrieval/pipeline/fusion.js';

describe('fuse (weighted RRF)', () => {
  it('scores Σ weight / (k + rank + 1) with 0-based ranks', () => {
    const [top] = fuse({ vector: ['a'], lexical: ['b', 'a'] }, { vector: 1, lexical: 1 });
    expect(top!.id).toBe('a');
    expect(top!.rrf).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(top!.channels).toEqual([
      { channel: 'vector', rank: 0, score: null },
      { channel: 'lexical', rank: 1, score: null },
    ]);
  });

  it('uses the default channel weights unless overridden', () => {
    const byDefault = fuse({ graph: ['g'], recent: ['r'] });
    expect(byDefault.map((c) => [c.id, c.rrf])).toEqual([
      ['g', 0.7 / 61],
      ['r', 0.6 / 61],
    ]);
    const overridden = fuse({ graph: ['g'], recent: ['r'] }, { recent: 2 });
    expect(overridden[0]!.id).toBe('r');
  });

  it('honours k and keeps raw channel scores', () => {
    const [top] = fuse(new Map([['vector', [{ id: 'a', score: 0.83 }]]]), {}, 0);
    expect(top).toEqual({ id: 'a', rrf: 1, channels: [{ channel: 'vector', rank: 0, score: 0.83 }] });
  });

  it('counts only the best position of an id repeated in one list', () => {
    const [top] = fuse({ vector: ['a', 'b', 'a'] });
    expect(top).toMatchObject({ id: 'a', rrf: 1 / 61, channels: [{ channel: 'vector', rank: 0 }] });
  });

  it('breaks ties by best rank, then by id', () => {
    // p and q both sit at ranks 0 and 1: equal sums, equal best rank, so the id decides.
    const fused = fuse({ a: ['q', 'p'], b: ['p', 'q'] }, { a: 1, b: 1 });
    expect(fused.map((c) => c.id)).toEqual(['p', 'q']);
    const tie = fuse({ a: ['m'], b: ['n'] }, { a: 1, b: 1 });
    expect(tie.map((c) => c.id)).toEqual(['m', 'n']);
  });

  it('is independent of channel order', () => {
    const one = fuse({ vector: ['a', 'b', 'c'], lexical: ['c', 'a'], graph: ['b'] });
    const two = fuse({ graph: ['b'], lexical: ['c', 'a'], vector: ['a', 'b', 'c'] });
    expect(two).toEqual(one);
  });

  it('rejects negative weights and k', () => {
    expect(() => fuse({ vector: ['a'] }, { vector: -1 })).toThrow(RangeError);
    expect(() => fuse({ vector: ['a'] }, {}, -1)).toThrow(RangeError);
  });
});

describe('scoreBonuses', () => {
  it('returns each term separately and their total', () => {
    const b = scoreBonuses({
      exactId: true,
      scopeMatch: true,
      currentFact: true,
      evidenceRank: 3,
      ageDays: 0,
    });
    expect(b.exactId).toBe(0.01);
    expect(b.scopeMatch).toBe(0.004);
    expect(b.currentFact).toBe(0.003);
    expect(b.evidence).toBeCloseTo(0.006, 12);
    expect(b.freshness).toBe(0.005);
    expect(b.total).toBeCloseTo(0.028, 12);
  });

  it('halves freshness every 14 days and ignores missing ages', () => {
    expect(scoreBonuses({ ageDays: 14 }).freshness).toBeCloseTo(0.0025, 12);
    expect(scoreBonuses({ ageDays: 28 }).freshness).toBeCloseTo(0.00125, 12);
    expect(scoreBonuses({ ageDays: -3 }).freshness).toBe(0.005);
    expect(scoreBonuses({ ageDays: null }).freshness).toBe(0);
  });

  it('with a query, freshness only breaks ties: below one rank step of a channel list', () => {
    const fresh = scoreBonuses({ ageDays: 0, withQuery: true }).freshness;
    expect(fresh).toBe(0.00003);
    expect(fresh).toBeLessThan(1 / (60 + 63) - 1 / (60 + 64));
    expect(scoreBonuses({ ageDays: 14, withQuery: true }).freshness).toBeCloseTo(0.000015, 12);
  });

  it('adds the entity-name bonus when the item is linked to an entity the query names', () => {
    const b = scoreBonuses({ namedEntity: true });
    expect(b.namedEntity).toBe(0.004);
    expect(b.total).toBe(0.004);
  });

  it('gives nothing for absent signals', () => {
    expect(scoreBonuses({})).toEqual({
      exactId: 0,
      namedEntity: 0,
      scopeMatch: 0,
      currentFact: 0,
      evidence: 0,
      freshness: 0,
      total: 0,
    });
  });
});
