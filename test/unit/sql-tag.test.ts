import { describe, expect, it } from 'vitest';
import { compileSql, empty, ident, join, param, raw, sql } from '../../src/kernel/store/sql.js';
import {
  factHeld,
  factVisible,
  inNamespace,
  inNamespaces,
  relevant,
  validAt,
  visible,
} from '../../src/kernel/store/visibility.js';

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
      sql`${visible('f', ['workspace:a'])} AND ${relevant('f', null)} AND ${validAt('f', asOf, 'active')}`,
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

  it('binds lists as one array parameter and never writes a status list from values', () => {
    const { text, values } = compileSql(
      sql`${validAt('f', new Date(0))} AND f.fact_id = ANY(${['a', "b'c"]}::text[])`,
    );
    expect(text).toContain("f.status IN ('ACTIVE', 'SUPERSEDED', 'EVIDENCE_LOST')");
    expect(text).toContain('f.fact_id = ANY($2::text[])');
    expect(values).toEqual([new Date(0), ['a', "b'c"]]);
  });

  it('shares one param across the predicates of a statement', () => {
    const scopes = param(['team']);
    const ns = param('n1');
    const { text, values } = compileSql(
      sql`${inNamespace('e', ns)} AND ${visible('e', scopes)} AND ${factVisible('f', scopes, ['subject'])} AND ${inNamespace('f', ns)}`,
    );
    expect(values).toEqual(['n1', ['team']]);
    expect(text).toBe(
      'e.namespace = $1 AND ($2::text[] IS NULL OR cardinality(e.visibility) = 0 OR e.visibility && $2::text[])' +
        ' AND (($2::text[] IS NULL OR cardinality(f.visibility) = 0 OR f.visibility && $2::text[])' +
        ' AND coalesce((SELECT ($2::text[] IS NULL OR cardinality(fe.visibility) = 0 OR fe.visibility && $2::text[])' +
        ' FROM entities fe\n               WHERE fe.namespace = f.namespace AND fe.key = f.object), false))' +
        ' AND f.namespace = $1',
    );
  });

  it('predicates without an alias name bare columns', () => {
    const { text } = compileSql(sql`${visible('', null)} AND ${factHeld('', null)}`);
    expect(text).toContain('cardinality(visibility) = 0');
    expect(text).toContain('cardinality(observation_ids) = 0');
    expect(text).toContain('ho.namespace = namespace');
  });

  it('splices optional parts as empty and identifiers only when they are plain names', () => {
    const optional = (on: boolean) => (on ? sql` AND x = ${1}` : empty);
    expect(compileSql(sql`SELECT 1 WHERE true${optional(false)}`)).toEqual({
      text: 'SELECT 1 WHERE true',
      values: [],
    });
    expect(compileSql(sql`SELECT 1 WHERE true${optional(true)}`).text).toBe('SELECT 1 WHERE true AND x = $1');
    expect(compileSql(sql`SELECT ${ident('f.valid_from')} FROM facts f`).text).toBe(
      'SELECT f.valid_from FROM facts f',
    );
    for (const bad of ['f.x; DROP TABLE facts', 'F', '"x"', '', 'a.b.c'])
      expect(() => ident(bad), bad).toThrow(/plain SQL identifier/);
  });
});
