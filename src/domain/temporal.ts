/**
 * Time rules. Every validity interval is half-open, `[from, to)`: a fact closed at T and its
 * successor opened at T never both hold at T. A `null` end is open (unbounded).
 */

export interface Interval {
  /** Inclusive start; `null` = since forever. */
  from: Date | null;
  /** Exclusive end; `null` = still valid. */
  to: Date | null;
}

/** True when `from ≤ asOf < to` (an open `to` never ends). */
export function validAt(from: Date, to: Date | null, asOf: Date): boolean {
  const t = asOf.getTime();
  return from.getTime() <= t && (to === null || t < to.getTime());
}

/** An interval with `from ≥ to` contains no instant. */
export function isEmptyInterval(interval: Interval): boolean {
  return interval.from !== null && interval.to !== null && interval.from.getTime() >= interval.to.getTime();
}

/**
 * Whether two half-open intervals share at least one instant. Touching intervals
 * (`[a, b)` and `[b, c)`) do not overlap — that is exactly supersession; empty intervals
 * overlap nothing.
 */
export function overlaps(a: Interval, b: Interval): boolean {
  if (isEmptyInterval(a) || isEmptyInterval(b)) return false;
  return before(a.from, b.to) && before(b.from, a.to);
}

// start < end, where a null start is -∞ and a null end is +∞.
function before(start: Date | null, end: Date | null): boolean {
  return start === null || end === null || start.getTime() < end.getTime();
}

export type DateTimeErrorCode = 'INVALID_FORMAT' | 'MISSING_TIMEZONE' | 'INVALID_DATE' | 'INVALID_TIME';

export class DateTimeParseError extends Error {
  override readonly name = 'DateTimeParseError';
  constructor(
    readonly code: DateTimeErrorCode,
    readonly input: string,
    message: string,
  ) {
    super(message);
  }
}

export type DateTimeParseResult = { ok: true; value: Date } | { ok: false; error: DateTimeParseError };

// Calendar date, `T`, hh:mm[:ss[.fraction]], then `Z` or ±hh[:mm]. Nothing else is accepted.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:(Z|z)|([+-])(\d{2})(?::?(\d{2}))?)$/;
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)?$/;

/**
 * Strict ISO-8601 instant: a calendar date, a time and an explicit zone (`Z` or an offset).
 * Impossible dates (2024-02-30, 2023-02-29) and times (24:00, :60) are refused instead of
 * rolling over the way `new Date()` does. Fractions beyond milliseconds are truncated.
 */
export function parseDateTime(input: string): DateTimeParseResult {
  const m = DATE_TIME.exec(input);
  if (!m) {
    const error = LOCAL_DATE_TIME.test(input)
      ? new DateTimeParseError('MISSING_TIMEZONE', input, `"${input}" has no timezone (add Z or an offset)`)
      : new DateTimeParseError(
          'INVALID_FORMAT',
          input,
          `expected an ISO-8601 date-time, got ${JSON.stringify(input)}`,
        );
    return { ok: false, error };
  }
  const [, ys, mos, ds, hs, mis, ss, frac, , sign, ohs, oms] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return {
      ok: false,
      error: new DateTimeParseError('INVALID_DATE', input, `"${input}" is not a calendar date`),
    };
  }
  const hour = Number(hs);
  const minute = Number(mis);
  const second = ss === undefined ? 0 : Number(ss);
  const offsetHours = ohs === undefined ? 0 : Number(ohs);
  const offsetMinutes = oms === undefined ? 0 : Number(oms);
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) {
    return {
      ok: false,
      error: new DateTimeParseError('INVALID_TIME', input, `"${input}" is not a valid time`),
    };
  }
  const millis = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  const offset = (offsetHours * 60 + offsetMinutes) * (sign === '-' ? -1 : 1);
  return { ok: true, value: new Date(date.getTime() - offset * 60_000) };
}

/** Like {@link parseDateTime} but throws the {@link DateTimeParseError}. */
export function parseDateTimeOrThrow(input: string): Date {
  const result = parseDateTime(input);
  if (!result.ok) throw result.error;
  return result.value;
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}
