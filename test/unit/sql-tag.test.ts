import { describe, expect, it } from 'vitest';
import {
  compileSql,
  inNamespaces,
  join,
  param,
  raw,
  relevant,
  sql,
  validAt,
  visible,
} from '../../src/kernel/store/sql.js';

describe('the sql tag', () => {
  it('numbers placeholders in order and splices fragments', () => {
    const where = sql`f.subject = ${'person:a'} AND ${inNamespaces('f', ['n1', 'n2'])}`;
    const { text, values } = compileSql(sql`/* q */ SELECT 1 FROM facts f WHERE ${where} LIMIT ${5}`);
    expect(text).toBe(
      '/* q */ SELECT 1 FROM facts f WHERE f.subject = $1 AND f.namespace = ANY($2::text[]) LIMIT $3',
    );
    expect(values).toEqual(['person:a', ['n1', 'n2'], 5]);
  });

  it('binds a param used twice once, and a repeated plain value twice', () => {
    const p = param(null);
    const { text, values } = compileSql(sql`${p} IS NULL OR x = ${p} OR y = ${1} OR z = ${1}`);
    expect(text).toBe('$1 IS NULL OR x = $1 OR y = $2 OR z = $3');
    expect(values).toEqual([null, 1, 1]);
  });

  it('joins fragments and inlines trusted text only through raw', () => {
    const { text, values } = compileSql(join([sql`a = ${1}`, sql`b = ${2}`, raw('c IS NULL')], ' AND '));
    expect(text).toBe('a = $1 AND b = $2 AND c IS NULL');
    expect(values).toEqual([1, 2]);
    // Input is never text: a hostile string is a value.
    expect(compileSql(sql`x = ${"'; DROP TABLE facts; --"}`).text).toBe('x = $1');
  });

  it('writes the visibility, relevance and valid-at predicates once, each value bound once', () => {
    const asOf = new Date('2024-01-01T00:00:00Z');
    const { text, values } = compileSql(
      sql`${visible('f', ['workspace:a'])} AND ${relevant('f', null)} AND ${validAt('f', asOf, ['ACTIVE'])}`,
    );
    expect(text).toContain(
      '($1::text[] IS NULL OR cardinality(f.visibility) = 0 OR f.visibility && $1::text[])',
    );
    expect(text).toContain("f.status IN ('ACTIVE')");
    expect(text).toContain(
      'f.valid_from <= $3::timestamptz AND (f.valid_to IS NULL OR f.valid_to > $3::timestamptz)',
    );
    expect(values).toEqual([['workspace:a'], null, asOf]);
  });
});
