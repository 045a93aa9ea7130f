import { describe, expect, it } from 'vitest';
import {
  DateTimeParseError,
  overlaps,
  parseDateTime,
  parseDateTimeOrThrow,
  validAt,
} from '../../src/domain/temporal.js';

const d = (iso: string) => new Date(iso);

describe('validAt (half-open [from, to))', () => {
  const from = d('2026-01-01T00:00:00Z');
  const to = d('2026-02-01T00:00:00Z');

  it('includes the start and excludes the end', () => {
    expect(validAt(from, to, from)).toBe(true);
    expect(validAt(from, to, d('2026-01-31T23:59:59.999Z'))).toBe(true);
    expect(validAt(from, to, to)).toBe(false);
    expect(validAt(from, to, d('2025-12-31T23:59:59.999Z'))).toBe(false);
  });

  it('treats an open end as still valid', () => {
    expect(validAt(from, null, d('2999-01-01T00:00:00Z'))).toBe(true);
  });
});

describe('overlaps', () => {
  const jan = { from: d('2026-01-01T00:00:00Z'), to: d('2026-02-01T00:00:00Z') };
  const feb = { from: d('2026-02-01T00:00:00Z'), to: d('2026-03-01T00:00:00Z') };

  it('does not count touching intervals as overlapping (that is supersession)', () => {
    expect(overlaps(jan, feb)).toBe(false);
    expect(overlaps(feb, jan)).toBe(false);
  });

  it('detects a shared instant, with open ends on either side', () => {
    expect(overlaps(jan, { from: d('2026-01-31T00:00:00Z'), to: null })).toBe(true);
    expect(overlaps({ from: null, to: d('2026-01-01T00:00:01Z') }, jan)).toBe(true);
    expect(overlaps({ from: null, to: null }, feb)).toBe(true);
    expect(overlaps({ from: feb.to, to: null }, jan)).toBe(false);
  });

  it('never lets an empty interval overlap anything', () => {
    const empty = { from: d('2026-01-15T00:00:00Z'), to: d('2026-01-15T00:00:00Z') };
    expect(overlaps(empty, jan)).toBe(false);
  });
});

describe('parseDateTime', () => {
  it('accepts ISO-8601 with Z or an offset and returns the UTC instant', () => {
    expect(parseDateTimeOrThrow('2024-02-29T10:00:00Z').toISOString()).toBe('2024-02-29T10:00:00.000Z');
    expect(parseDateTimeOrThrow('2024-03-01T03:00:00+03:00').toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(parseDateTimeOrThrow('2024-03-01T00:00-0530').toISOString()).toBe('2024-03-01T05:30:00.000Z');
    expect(parseDateTimeOrThrow('2024-03-01T00:00:00.123456789Z').toISOString()).toBe(
      '2024-03-01T00:00:00.123Z',
    );
    expect(parseDateTimeOrThrow('0001-01-01T00:00:00Z').getUTCFullYear()).toBe(1);
  });

  it('rejects dates that do not exist instead of rolling over', () => {
    for (const bad of [
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-04-31T00:00:00Z',
    ]) {
      const result = parseDateTime(bad);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.code).toBe('INVALID_DATE');
    }
  });

  it('rejects impossible times', () => {
    for (const bad of [
      '2024-01-01T24:00:00Z',
      '2024-01-01T10:60:00Z',
      '2024-01-01T10:00:60Z',
      '2024-01-01T10:00:00+25:00',
    ]) {
      const result = parseDateTime(bad);
      expect(result.ok ? 'ok' : result.error.code).toBe('INVALID_TIME');
    }
  });

  it('requires a timezone', () => {
    const result = parseDateTime('2024-01-01T10:00:00');
    expect(result.ok ? 'ok' : result.error.code).toBe('MISSING_TIMEZONE');
    expect(parseDateTime('2024-01-01').ok).toBe(false);
  });

  it('rejects anything that is not the ISO shape', () => {
    for (const bad of ['yesterday', '1700000000', '2024/01/01T00:00:00Z', ' 2024-01-01T00:00:00Z', '']) {
      const result = parseDateTime(bad);
      expect(result.ok ? 'ok' : result.error.code).toBe('INVALID_FORMAT');
    }
    expect(() => parseDateTimeOrThrow('nope')).toThrow(DateTimeParseError);
  });
});
