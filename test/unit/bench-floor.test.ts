import { describe, expect, it } from 'vitest';
import { withUniqueTraceIds } from '../../bench/floor-replay.js';
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
});
