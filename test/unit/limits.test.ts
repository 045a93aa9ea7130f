import { describe, expect, it } from 'vitest';
import { checkObservationLimits, isValidKind, OBSERVATION_LIMITS } from '../../src/domain/limits.js';

const codes = (obs: Parameters<typeof checkObservationLimits>[0]) =>
  checkObservationLimits(obs).map((v) => v.code);

describe('checkObservationLimits', () => {
  it('accepts an observation within every limit', () => {
    expect(
      checkObservationLimits({
        kind: 'task.completed',
        content: 'ok',
        data: { a: 1 },
        scopes: ['project:alpha'],
      }),
    ).toEqual([]);
  });

  it('measures content in UTF-8 bytes, not characters', () => {
    const limit = OBSERVATION_LIMITS.maxContentBytes;
    expect(codes({ kind: 'note', content: 'a'.repeat(limit) })).toEqual([]);
    expect(codes({ kind: 'note', content: 'я'.repeat(limit / 2 + 1) })).toEqual(['CONTENT_TOO_LARGE']);
  });

  it('measures data as canonical JSON bytes', () => {
    const limit = OBSERVATION_LIMITS.maxDataBytes;
    expect(codes({ kind: 'note', data: { s: 'x'.repeat(limit - 8) } })).toEqual([]);
    expect(codes({ kind: 'note', data: { s: 'x'.repeat(limit - 7) } })).toEqual(['DATA_TOO_LARGE']);
    expect(codes({ kind: 'note', data: { n: 10n } })).toEqual(['INVALID_DATA']);
  });

  it('allows up to 200 assertions and 20 scopes', () => {
    expect(
      codes({
        kind: 'note',
        assertions: new Array(200).fill({}),
        scopes: Array.from({ length: 20 }, (_, i) => `task:${i}`),
      }),
    ).toEqual([]);
    expect(codes({ kind: 'note', assertions: new Array(201).fill({}) })).toEqual(['TOO_MANY_ASSERTIONS']);
    expect(codes({ kind: 'note', scopes: Array.from({ length: 21 }, (_, i) => `task:${i}`) })).toEqual([
      'TOO_MANY_SCOPES',
    ]);
  });

  it('rejects malformed scope labels', () => {
    const [violation] = checkObservationLimits({
      kind: 'note',
      scopes: ['project:alpha', 'alpha', 'project: x'],
    });
    expect(violation?.code).toBe('INVALID_SCOPE');
    expect(violation?.message).toContain('"alpha"');
  });

  it('reports every violation at once', () => {
    expect(
      codes({
        kind: 'Bad Kind',
        content: 'x'.repeat(OBSERVATION_LIMITS.maxContentBytes + 1),
        assertions: new Array(201).fill({}),
      }),
    ).toEqual(['INVALID_KIND', 'CONTENT_TOO_LARGE', 'TOO_MANY_ASSERTIONS']);
  });
});

describe('kind', () => {
  it('matches [a-z0-9][a-z0-9._-]{0,127}', () => {
    expect(isValidKind('task.completed')).toBe(true);
    expect(isValidKind('0day_v2-x')).toBe(true);
    expect(isValidKind(`a${'b'.repeat(127)}`)).toBe(true);
    expect(isValidKind(`a${'b'.repeat(128)}`)).toBe(false);
    expect(isValidKind('')).toBe(false);
    expect(isValidKind('.hidden')).toBe(false);
    expect(isValidKind('Task')).toBe(false);
    expect(isValidKind('task completed')).toBe(false);
  });
});
