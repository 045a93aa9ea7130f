import { describe, expect, it } from 'vitest';
import { checkRegexSafety, compilePattern, probePattern } from '../../src/domain/regex-safety.js';

describe('regex safety: the static check', () => {
  it.each([
    ['(a+)+', 'nested-quantifier'],
    ['^(a+)+$', 'nested-quantifier'],
    ['(a*)*b', 'nested-quantifier'],
    ['(\\s*,\\s*\\w+)*', 'nested-quantifier'],
    ['(a{1,5})+', 'nested-quantifier'],
    ['(.*a){12}', 'nested-quantifier'],
    ['(a|a)*', 'overlapping-alternation'],
    ['(a|ab)+$', 'overlapping-alternation'],
    ['(\\w|\\d)+', 'overlapping-alternation'],
    ['(x|[a-z])*y', 'overlapping-alternation'],
    ['(a|)*', 'overlapping-alternation'],
    ['(A|a)+', undefined],
    ['.*a.*b.*c', 'overlapping-quantifiers'],
    ['(a)\\1', 'backreference'],
    ['(?<x>a)\\k<x>', 'backreference'],
    ['[', 'syntax'],
    ['a{3,2}', 'syntax'],
    ['', 'syntax'],
  ])('%s → %s', (pattern, rule) => {
    const verdict = checkRegexSafety(pattern);
    if (rule === undefined) {
      expect(verdict.ok).toBe(true);
    } else {
      expect(verdict.ok).toBe(false);
      expect(verdict.rule).toBe(rule);
      expect(verdict.message).toBeTruthy();
    }
  });

  it('case-insensitive alternation overlaps under the i flag', () => {
    expect(checkRegexSafety('(A|a)+').ok).toBe(true);
    expect(checkRegexSafety('(A|a)+', 'i')).toMatchObject({ ok: false, rule: 'overlapping-alternation' });
  });

  it.each([
    '\\b(?<id>[A-Z]+-\\d+)\\b',
    '^(GET|POST|PUT|PATCH|DELETE) (/\\S+)$',
    '(\\d{1,3}\\.){3}\\d{1,3}',
    '[a-z]+-\\d+',
    '(ab|cd)+',
    '([a-z]{2})+',
    'x(?=y)',
    '\\p{L}+',
    'INC-\\d{4,8}',
    '(?:svc|service):([a-z0-9-]{1,64})',
  ])('accepts %s', (pattern) => {
    expect(checkRegexSafety(pattern)).toEqual({ ok: true });
  });

  it('refuses long patterns and unknown flags', () => {
    expect(checkRegexSafety('a'.repeat(600))).toMatchObject({ ok: false, rule: 'length' });
    expect(checkRegexSafety('a', 'g')).toMatchObject({ ok: false, rule: 'flags' });
  });

  it('names where the problem is', () => {
    const verdict = checkRegexSafety('^id-(x+)+$');
    expect(verdict.message).toContain('"(x+)+" at 4');
  });
});

describe('regex safety: the runtime guard', () => {
  it('catches an exponential pattern on short adversarial inputs, quickly', () => {
    const started = performance.now();
    const verdict = probePattern('^(a+)+$');
    expect(verdict).toMatchObject({ ok: false, rule: 'runtime-probe' });
    // Lengths grow in small steps, so the guard stops within a few budgets.
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('lets a linear pattern through', () => {
    expect(probePattern('^[A-Z]+-\\d+$')).toEqual({ ok: true });
  });

  it('compiles in Unicode mode', () => {
    expect(compilePattern('\\p{Lu}').test('Ж')).toBe(true);
    expect(compilePattern('a', 'i').flags).toBe('iu');
  });
});
