import { describe, expect, it } from 'vitest';
import { withUniqueTraceIds } from '../../bench/floor-replay.js';
import { distinctVariables, floorRatio, overheadOf } from '../../bench/read-floor.js';
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

describe('the read floor', () => {
  const traces = (ids: string[]) =>
    JSON.stringify(ids.map((id) => ({ namespace: 'ns', trace_id: id, kind: 'context', request: {} })));

  it('gives every replayed context trace a new id and keeps the rest of the statement', () => {
    const params = [30, ['ns'], traces(['t1', 't2'])];
    const rewritten = withUniqueTraceIds(params, 'floor7');
    expect(rewritten.slice(0, 2)).toEqual([30, ['ns']]);
    const rows = JSON.parse(rewritten[2] as string) as Record<string, unknown>[];
    expect(rows.map((r) => r.trace_id)).toEqual(['t1-floor7', 't2-floor7']);
    expect(rows[0]).toMatchObject({ namespace: 'ns', kind: 'context', request: {} });
    expect(withUniqueTraceIds(params, 'floor8')[2]).not.toBe(rewritten[2]);
  });

  it('leaves parameters that are not trace rows alone', () => {
    const params = [null, '[0.1,0.2]', '[{"id":1}]', 'not json [', '[broken'];
    expect(withUniqueTraceIds(params, 'x')).toEqual(params);
  });

  it('divides memgate by the floor, and answers null without both figures', () => {
    expect(floorRatio(12, 4)).toBe(3);
    expect(floorRatio(null, 4)).toBeNull();
    expect(floorRatio(12, null)).toBeNull();
    expect(floorRatio(12, 0)).toBeNull();
    expect(floorRatio(Number.NaN, 4)).toBeNull();
  });

  it('captures each distinct request of the runs once, first use first', () => {
    const scenario = { variables: (_ds: unknown, i: number) => ({ q: i % 3 }) };
    const ds = {} as Parameters<typeof distinctVariables>[1];
    expect(distinctVariables(scenario, ds, [4, 5, 6, 7, 8])).toEqual([{ q: 1 }, { q: 2 }, { q: 0 }]);
  });

  it('takes the overhead per captured request, medians over the set, failed statements counted', () => {
    const captured = [10, 20, 30].map((e2eMs) => ({
      e2eMs,
      capture: { statements: 2, sumMs: e2eMs, wallMs: e2eMs / 2 },
      gatewayStatements: 2,
    }));
    const replays = [5, 5, 10].map((ms, k) => ({
      ms,
      statements: 2,
      errors: k === 2 ? 1 : 0,
      byName: { a: ms - 1, b: 1 },
    }));
    const overhead = overheadOf(captured, replays, 2);
    expect(overhead).toMatchObject({
      samples: 3,
      e2eMs: 20,
      sqlMs: 5,
      ratio: 3,
      sqlWallMs: 10,
      wallRatio: 2,
    });
    expect(overhead.replayErrors).toBe(3);
    expect(overhead.slowest).toEqual([
      { name: 'a', ms: 4 },
      { name: 'b', ms: 1 },
    ]);
  });
});
