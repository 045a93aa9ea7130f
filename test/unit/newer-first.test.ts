import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/modules/retrieval/compiler/candidates.js';
import { newerFirst } from '../../src/modules/retrieval/compiler/newer-first.js';
import { type Scored, queryIdentifiers } from '../../src/modules/retrieval/compiler/signals.js';

// Newer first on one topic: scores move only within a group of observations that fit the
// query and name the same identifier of it; the newest takes the best score.

function scored(id: string, text: string, minutes: number, score: number, channel = 'lexical'): Scored {
  const candidate = {
    key: `chunk:${id}`,
    kind: 'chunk',
    section: 'RECENT_OBSERVATIONS',
    text,
    time: new Date(Date.parse('2024-05-01T09:00:00Z') + minutes * 60_000),
  } as Candidate;
  return {
    candidate,
    score,
    signals: {
      rrf: score,
      channels: [{ channel, rank: 0, score: null }],
      exactId: 0,
      entity: 0,
      entities: [],
      scope: 0,
      current: 0,
      evidence: 0,
      freshness: 0,
      label: 0,
      terms: 0,
      asking: 0,
      newer: 0,
      state: 0,
    },
  };
}

const ids = new Set(['atl-142']);

describe('newerFirst', () => {
  it('gives the newest message of a thread the best score of the thread, the rest in time order', () => {
    const out = newerFirst(
      [
        scored('a', 'ATL-142 lags 40s', 0, 0.05),
        scored('b', 'ATL-142 still lags 40s', 30, 0.04),
        scored('c', 'ATL-142 resolved', 90, 0.03),
        scored('x', 'unrelated deploy note', 100, 0.045),
      ],
      ids,
    );
    const byId = Object.fromEntries(out.map((s) => [s.candidate.key, s]));
    expect(byId['chunk:c']!.score).toBe(0.05);
    expect(byId['chunk:b']!.score).toBe(0.04);
    expect(byId['chunk:a']!.score).toBe(0.03);
    expect(byId['chunk:c']!.signals.newer).toBeCloseTo(0.02, 12);
    expect(byId['chunk:a']!.signals.newer).toBeCloseTo(-0.02, 12);
    // Outside the thread nothing moves.
    expect(byId['chunk:x']!.score).toBe(0.045);
    expect(byId['chunk:x']!.signals.newer).toBe(0);
  });

  it('leaves items alone without a query identifier, or found only by the recent channel', () => {
    const items = [scored('a', 'ATL-142 lags', 0, 0.05), scored('c', 'ATL-142 resolved', 90, 0.03, 'recent')];
    expect(newerFirst(items, new Set()).map((s) => s.score)).toEqual([0.05, 0.03]);
    expect(newerFirst(items, ids).map((s) => s.score)).toEqual([0.05, 0.03]);
  });
});

describe('queryIdentifiers', () => {
  it('keeps what looks like an identifier, not a hyphenated word', () => {
    expect([
      ...queryIdentifiers('Any dairy-free desserts? ATL-142 lags, see parseConfig in src/app.ts'),
    ]).toEqual(['atl-142', 'parseconfig', 'src/app.ts']);
  });
});
