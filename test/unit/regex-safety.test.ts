import { describe, expect, it } from 'vitest';
import {
  MAX_MATCH_INPUT,
  MatchBudget,
  checkRegexSafety,
  compilePattern,
} from '../../src/domain/regex-safety.js';

describe('user patterns: what may be stored', () => {
  it.each([
    ['(a)\\1', 'backreference'],
    ['(?<x>a)\\k<x>', 'backreference'],
    ['x(?=y)', 'lookaround'],
    ['x(?!y)', 'lookaround'],
    ['(?<=y)x', 'lookaround'],
    ['[', 'syntax'],
    ['a{3,2}', 'syntax'],
    ['', 'syntax'],
    ['a{0,4000}a{0,4000}b', 'size'],
    ['a{0,1000}a{0,1000}b', 'size'],
  ])('%s → %s', (pattern, rule) => {
    const verdict = checkRegexSafety(pattern);
    expect(verdict.ok).toBe(false);
    expect(verdict.rule).toBe(rule);
    expect(verdict.message).toBeTruthy();
  });

  it.each([
    '\\b(?<id>[A-Z]+-\\d+)\\b',
    '^(GET|POST|PUT|PATCH|DELETE) (/\\S+)$',
    '(\\d{1,3}\\.){3}\\d{1,3}',
    '[a-z]+-\\d+',
    '(ab|cd)+',
    '\\p{L}+',
    'INC-\\d{4,8}',
    '(?:svc|service):([a-z0-9-]{1,64})',
    // shapes a backtracking engine cannot survive are plain linear scans here
    '(a+)+$',
    '(a|ab)*c',
    '.*a.*b.*c',
  ])('accepts %s', (pattern) => {
    expect(checkRegexSafety(pattern)).toEqual({ ok: true });
  });

  it('refuses long patterns and unknown flags', () => {
    expect(checkRegexSafety('a'.repeat(600))).toMatchObject({ ok: false, rule: 'length' });
    expect(checkRegexSafety('a', 'g')).toMatchObject({ ok: false, rule: 'flags' });
  });
});

describe('user patterns: how they match', () => {
  it('matches code points, with the flags a pack may set', () => {
    expect(compilePattern('\\p{Lu}').test('Ж')).toBe(true);
    expect(compilePattern('^acme$', 'i').test('ACME')).toBe(true);
    expect(compilePattern('^b$', 'm').test('a\nb')).toBe(true);
    expect(compilePattern('a.b', 's').test('a\nb')).toBe(true);
    expect(compilePattern('\\u{1F600}').test('x😀')).toBe(true);
  });

  it('finds named groups, the first group, or the whole match', () => {
    const named = compilePattern('(?<id>[A-Z]+-\\d+)');
    expect(named.findAll('see ABC-12 and XY-3, not ab-1', 5).map((m) => m.groups.id)).toEqual([
      'ABC-12',
      'XY-3',
    ]);
    expect(compilePattern('id:(\\d+)').findAll('id:42', 5)[0]?.firstGroup).toBe('42');
    expect(
      compilePattern('\\d+')
        .findAll('1 22 333', 2)
        .map((m) => m.text),
    ).toEqual(['1', '22']);
  });

  it('matches nothing on inputs longer than the match cap', () => {
    const re = compilePattern('a');
    expect(re.test('a'.repeat(MAX_MATCH_INPUT + 1))).toBe(false);
    expect(re.findAll('a'.repeat(MAX_MATCH_INPUT + 1), 1)).toEqual([]);
  });

  it('a budget is charged with the time of each match and reports when it is spent', () => {
    const budget = new MatchBudget(0);
    expect(budget.exhausted).toBe(true);
    const roomy = new MatchBudget(60_000);
    expect(roomy.charge(() => compilePattern('x').test('x'))).toBe(true);
    expect(roomy.exhausted).toBe(false);
  });
});
