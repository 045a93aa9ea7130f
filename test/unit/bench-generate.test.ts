import { describe, expect, it } from 'vitest';
import { Dataset, type SizeSpec } from '../../bench/generate.js';
import { binaryVectorCopy, pgTextArray } from '../../bench/load.js';
import { Rng, Zipf, mulberry32 } from '../../bench/rng.js';
import { latency, percentile } from '../../bench/stats.js';
import { TextModel } from '../../bench/text-model.js';

// A synthetic vocabulary: plain lowercase words, enough for topics.
const letters = 'abcdefghijklmnopqrstuvwxyz';
const vocabulary = Array.from({ length: 3000 }, (_, i) =>
  [letters[i % 26], letters[Math.floor(i / 26) % 26], letters[Math.floor(i / 676) % 26], 'x'].join(''),
);
const tiny: SizeSpec = { name: 'quick', chunks: 500, entities: 600, facts: 3000 };

function build(seed = 7) {
  return new Dataset(tiny, seed, new TextModel(vocabulary, seed));
}

describe('benchmark generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = [...build().factRows()].map((f) => f.factId);
    const b = [...build().factRows()].map((f) => f.factId);
    const c = [...build(8).factRows()].map((f) => f.factId);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect([...build().chunkRows()].map((r) => r.text)).toEqual([...build().chunkRows()].map((r) => r.text));
  });

  it('produces the requested sizes', () => {
    const ds = build();
    expect([...ds.entityRows()]).toHaveLength(tiny.entities);
    expect([...ds.factRows()]).toHaveLength(tiny.facts);
    expect([...ds.chunkRows()].length + [...ds.observationChunkRows()].length).toBe(tiny.chunks);
    expect(new Set([...ds.factRows()].map((f) => f.factId)).size).toBe(tiny.facts);
  });

  it('links supersessions both ways and closes the old fact where the new one starts', () => {
    const facts = [...build().factRows()];
    const byId = new Map(facts.map((f) => [f.factId, f]));
    const superseded = facts.filter((f) => f.status === 'SUPERSEDED');
    expect(superseded.length).toBeGreaterThan(0);
    for (const old of superseded) {
      const next = byId.get(old.supersededBy!)!;
      expect(next.supersedes).toBe(old.factId);
      expect(old.validTo?.getTime()).toBe(next.validFrom.getTime());
      expect(next.subject).toBe(old.subject);
      expect(next.predicate).toBe(old.predicate);
    }
    for (const f of facts.filter((x) => x.conflict)) {
      expect(byId.get(f.conflictsWith[0]!)!.conflictsWith).toContain(f.factId);
    }
  });

  it('gives fact degrees a heavy tail', () => {
    const degree = new Map<string, number>();
    for (const f of build().factRows()) {
      degree.set(f.subject, (degree.get(f.subject) ?? 0) + 1);
      degree.set(f.object, (degree.get(f.object) ?? 0) + 1);
    }
    const values = [...degree.values()];
    const mean = values.reduce((x, y) => x + y, 0) / values.length;
    expect(Math.max(...values)).toBeGreaterThan(mean * 8);
  });

  it('makes queries from a chunk topic words', () => {
    const ds = build();
    const q = ds.searchQuery(3);
    expect(q.split(' ').length).toBeGreaterThan(0);
    expect(ds.searchQuery(3)).toBe(q);
  });
});

describe('benchmark helpers', () => {
  it('mulberry32 and Zipf are reproducible and skewed', () => {
    expect(mulberry32(1)()).toBe(mulberry32(1)());
    const zipf = new Zipf(1000, 1);
    const rng = new Rng(3);
    const counts = new Array(1000).fill(0);
    for (let i = 0; i < 20_000; i++) counts[zipf.sample(rng)]++;
    expect(counts[0]).toBeGreaterThan(counts[999] * 20);
  });

  it('percentiles interpolate between ranks', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([5], 99)).toBe(5);
    expect(latency([1, 2, 3]).p50).toBe(2);
  });

  it('writes PostgreSQL binary COPY rows of (int4, vector)', () => {
    const buf = binaryVectorCopy([[1, -0.5]]);
    expect(buf.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0');
    // header 19 bytes, then field count 2, int4 length 4, value 0, vector length 4 + 2·4
    expect(buf.readInt16BE(19)).toBe(2);
    expect(buf.readInt32BE(21)).toBe(4);
    expect(buf.readInt32BE(29)).toBe(12);
    expect(buf.readInt16BE(33)).toBe(2);
    expect(buf.readFloatBE(37)).toBe(1);
    expect(buf.readFloatBE(41)).toBe(-0.5);
    expect(buf.readInt16BE(buf.length - 2)).toBe(-1);
  });

  it('quotes text[] literals', () => {
    expect(pgTextArray(['a', 'b "c"', 'd\\e'])).toBe('{"a","b \\"c\\"","d\\\\e"}');
  });
});
