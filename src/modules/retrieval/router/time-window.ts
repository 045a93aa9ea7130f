/**
 * Time windows named in a query ("last week", "in May 2023", "before 8 May 2023", "recently"),
 * resolved against a reference time the caller gives — never the server clock. All calendar
 * arithmetic is in UTC. `since` is inclusive, `until` exclusive; null means open.
 */

export type TimeWindowKind = 'RECENT' | 'RANGE' | 'BEFORE' | 'AFTER';

export interface TimeWindow {
  kind: TimeWindowKind;
  since: Date | null;
  until: Date | null;
  /** The words of the query the window was read from. */
  phrase: string;
}

const DAY = 86_400_000;
/** "recently" / "lately": the last 14 days. */
export const RECENT_DAYS = 14;

const MONTHS: Record<string, number> = {
  january: 0,
  jan: 0,
  february: 1,
  feb: 1,
  march: 2,
  mar: 2,
  april: 3,
  apr: 3,
  may: 4,
  june: 5,
  jun: 5,
  july: 6,
  jul: 6,
  august: 7,
  aug: 7,
  september: 8,
  sep: 8,
  sept: 8,
  october: 9,
  oct: 9,
  november: 10,
  nov: 10,
  december: 11,
  dec: 11,
};
/** Russian month names in the nominative, genitive («8 марта») and prepositional («в марте»). */
const RU_MONTHS: ReadonlyArray<[RegExp, number]> = [
  [/^январ/, 0],
  [/^феврал/, 1],
  [/^март/, 2],
  [/^апрел/, 3],
  [/^ма[йяе]$/, 4],
  [/^июн/, 5],
  [/^июл/, 6],
  [/^август/, 7],
  [/^сентябр/, 8],
  [/^октябр/, 9],
  [/^ноябр/, 10],
  [/^декабр/, 11],
];
const RU_MONTH_RE = '(?:январ|феврал|март|апрел|июн|июл|август|сентябр|октябр|ноябр|декабр)[ьяеа]?|ма[йяе]';
const ruMonth = (word: string): number | null =>
  RU_MONTHS.find(([re]) => re.test(word.toLowerCase()))?.[1] ?? null;
const RU_UNIT: ReadonlyArray<[RegExp, number]> = [
  [/^(?:дн|ден|сут)/, 1],
  [/^недел/, 7],
  [/^месяц/, 30],
  [/^(?:год|лет)/, 365],
];
const ruUnitDays = (word: string): number => RU_UNIT.find(([re]) => re.test(word.toLowerCase()))?.[1] ?? 1;
const RU_NUMBERS: Record<string, number> = {
  один: 1,
  одну: 1,
  два: 2,
  две: 2,
  три: 3,
  четыре: 4,
  пять: 5,
  шесть: 6,
  семь: 7,
  десять: 10,
  несколько: 3,
};
const ruCount = (word: string | undefined): number =>
  word === undefined ? 1 : (RU_NUMBERS[word.toLowerCase()] ?? (Number(word) || 1));

const MONTH_RE = Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|');
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  couple: 2,
  few: 3,
};

const startOfDay = (t: number): number => Math.floor(t / DAY) * DAY;
const utc = (y: number, m: number, d = 1): Date => new Date(Date.UTC(y, m, d));

/** A date named in text, with the span it covers (a day, a month or a year). */
interface NamedDate {
  start: Date;
  end: Date;
}

const DATE_PATTERNS = [
  // 2023-05-08
  String.raw`\d{4}-\d{2}-\d{2}`,
  // 8 May 2023 | 8th of May, 2023
  String.raw`\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:${MONTH_RE})\.?,?\s+\d{4}`,
  // May 8, 2023 | May 8th 2023
  String.raw`(?:${MONTH_RE})\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}`,
  // May 2023
  String.raw`(?:${MONTH_RE})\.?,?\s+\d{4}`,
  // 2023
  String.raw`(?:19|20)\d{2}`,
];
const DATE_RE = `(?:${DATE_PATTERNS.join('|')})`;

export function parseNamedDate(text: string): NamedDate | null {
  const s = text.trim().toLowerCase();
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (m) {
    const start = utc(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    return Number.isNaN(start.getTime()) ? null : { start, end: new Date(start.getTime() + DAY) };
  }
  m = new RegExp(String.raw`^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(${MONTH_RE})\.?,?\s+(\d{4})$`).exec(s);
  if (m) {
    const start = utc(Number(m[3]), MONTHS[m[2]!]!, Number(m[1]));
    return { start, end: new Date(start.getTime() + DAY) };
  }
  m = new RegExp(String.raw`^(${MONTH_RE})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$`).exec(s);
  if (m) {
    const start = utc(Number(m[3]), MONTHS[m[1]!]!, Number(m[2]));
    return { start, end: new Date(start.getTime() + DAY) };
  }
  m = new RegExp(String.raw`^(${MONTH_RE})\.?,?\s+(\d{4})$`).exec(s);
  if (m) {
    const month = MONTHS[m[1]!]!;
    return { start: utc(Number(m[2]), month), end: utc(Number(m[2]), month + 1) };
  }
  m = /^((?:19|20)\d{2})$/.exec(s);
  if (m) return { start: utc(Number(m[1]), 0), end: utc(Number(m[1]) + 1, 0) };
  return null;
}

/** A case-insensitive Unicode regex where `\b` is a word boundary for Cyrillic too. */
const BOUNDARY = String.raw`(?:(?<![\p{L}\d])(?=[\p{L}\d])|(?<=[\p{L}\d])(?![\p{L}\d]))`;
function W(source: string): RegExp {
  return new RegExp(source.replaceAll(String.raw`\b`, BOUNDARY), 'iu');
}

type Rule = { re: RegExp; resolve: (m: RegExpExecArray, now: number) => Omit<TimeWindow, 'phrase'> | null };

const range = (since: number, until: number): Omit<TimeWindow, 'phrase'> => ({
  kind: 'RANGE',
  since: new Date(since),
  until: new Date(until),
});

const count = (word: string): number => NUMBER_WORDS[word] ?? Number(word);

// A day named without its year ("October 12", "12 October"): the latest such day not after now.
const DAY_NO_YEAR = String.raw`(?:(?:${MONTH_RE})\.?\s+\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:${MONTH_RE}))(?!\s*,?\s*\d{4})(?![\p{L}\d])`;

function parseDayWithoutYear(text: string, now: number): NamedDate | null {
  const s = text.trim().toLowerCase();
  const m =
    new RegExp(String.raw`^(${MONTH_RE})\.?\s+(\d{1,2})(?:st|nd|rd|th)?$`).exec(s) ??
    new RegExp(String.raw`^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(${MONTH_RE})$`).exec(s);
  if (!m) return null;
  const [month, day] = /^\d/.test(m[1]!) ? [MONTHS[m[2]!]!, Number(m[1])] : [MONTHS[m[1]!]!, Number(m[2])];
  if (day < 1 || day > 31) return null;
  const year = new Date(now).getUTCFullYear();
  let start = utc(year, month, day);
  if (start.getTime() > now) start = utc(year - 1, month, day);
  return { start, end: new Date(start.getTime() + DAY) };
}

const WEEK_OF_MONTH: Record<string, number> = { first: 0, second: 1, third: 2, fourth: 3, last: -1 };

// Ordered: the first rule that matches wins, so the more specific phrases come first.
const RULES: Rule[] = [
  {
    // "between October 12 and October 16": days without a year, the later one after the first.
    re: W(String.raw`\bbetween\s+(${DAY_NO_YEAR})\s+and\s+(${DAY_NO_YEAR})`),
    resolve: (m, now) => {
      const a = parseDayWithoutYear(m[1]!, now);
      const b = parseDayWithoutYear(m[2]!, now);
      if (!a || !b) return null;
      const end =
        b.start < a.start
          ? utc(b.start.getUTCFullYear() + 1, b.start.getUTCMonth(), b.start.getUTCDate())
          : b.start;
      return range(a.start.getTime(), end.getTime() + DAY);
    },
  },
  {
    // "the last week of October", "the first week of May 2024": seven days of that month.
    re: W(String.raw`\b(first|second|third|fourth|last)\s+week\s+of\s+(${MONTH_RE})\.?(?:,?\s+(\d{4}))?`),
    resolve: (m, now) => {
      const month = MONTHS[m[2]!.toLowerCase()]!;
      const ref = new Date(now);
      let year = m[3] ? Number(m[3]) : ref.getUTCFullYear();
      if (!m[3] && utc(year, month).getTime() > now) year -= 1;
      const nth = WEEK_OF_MONTH[m[1]!.toLowerCase()]!;
      const monthEnd = utc(year, month + 1).getTime();
      const start = nth < 0 ? monthEnd - 7 * DAY : utc(year, month, 1 + 7 * nth).getTime();
      return range(start, Math.min(start + 7 * DAY, monthEnd));
    },
  },
  {
    re: new RegExp(String.raw`\bbetween\s+(${DATE_RE})\s+and\s+(${DATE_RE})`, 'i'),
    resolve: (m) => {
      const a = parseNamedDate(m[1]!);
      const b = parseNamedDate(m[2]!);
      return a && b ? range(a.start.getTime(), b.end.getTime()) : null;
    },
  },
  {
    re: W(String.raw`\b(?:before|prior to|until|earlier than|до)\s+(${DATE_RE})`),
    resolve: (m) => {
      const d = parseNamedDate(m[1]!);
      return d ? { kind: 'BEFORE', since: null, until: d.start } : null;
    },
  },
  {
    re: W(String.raw`\b(?:after|since|later than|после|с)\s+(${DATE_RE})`),
    resolve: (m, _now) => {
      const d = parseNamedDate(m[1]!);
      if (!d) return null;
      // "after May 2023" starts once May is over; "since May 2023" includes May.
      const after = /^(after|later than|после)/i.test(m[0]);
      return { kind: 'AFTER', since: after ? d.end : d.start, until: null };
    },
  },
  {
    re: W(String.raw`\b(today|сегодня)\b`),
    resolve: (_m, now) => range(startOfDay(now), startOfDay(now) + DAY),
  },
  {
    re: W(String.raw`\b(yesterday|вчера)\b`),
    resolve: (_m, now) => range(startOfDay(now) - DAY, startOfDay(now)),
  },
  {
    re: W(
      String.raw`\b(?:(?:in|over|during)\s+)?(?:the\s+)?(?:last|past|previous)\s+(\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)\s+(day|week|month|year)s?\b`,
    ),
    resolve: (m, now) => {
      const n = count(m[1]!.replace(/ of$/, ''));
      return range(now - n * UNIT_DAYS[m[2]!.toLowerCase()]! * DAY, now);
    },
  },
  {
    re: W(
      String.raw`\b(\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)\s+(day|week|month|year)s?\s+ago\b`,
    ),
    resolve: (m, now) => {
      const n = count(
        m[1]!.replace(/^a (couple|few) of$|^a few$/, (x) => (x.includes('couple') ? 'couple' : 'few')),
      );
      const unit = UNIT_DAYS[m[2]!.toLowerCase()]!;
      const centre = startOfDay(now - n * unit * DAY);
      return unit === 1 ? range(centre, centre + DAY) : range(centre - unit * DAY, centre + unit * DAY);
    },
  },
  {
    re: W(
      String.raw`\b(?:last|past|previous)\s+(week|month|year)\b|на прошлой неделе|в прошлом месяце|в прошлом году`,
    ),
    resolve: (m, now) => {
      const unit = (
        m[1] ?? (/недел/i.test(m[0]) ? 'week' : /месяц/i.test(m[0]) ? 'month' : 'year')
      ).toLowerCase();
      return range(now - UNIT_DAYS[unit]! * DAY, now);
    },
  },
  {
    re: W(String.raw`\bthis\s+(week|month|year)\b|на этой неделе|в этом месяце`),
    resolve: (m, now) => {
      const unit = (m[1] ?? (/недел/i.test(m[0]) ? 'week' : 'month')).toLowerCase();
      const d = new Date(now);
      if (unit === 'week') {
        const dow = (d.getUTCDay() + 6) % 7; // Monday = 0
        return range(startOfDay(now) - dow * DAY, now);
      }
      if (unit === 'month') return range(utc(d.getUTCFullYear(), d.getUTCMonth()).getTime(), now);
      return range(utc(d.getUTCFullYear(), 0).getTime(), now);
    },
  },
  {
    // «8 марта», «8 марта 2026 года»: that day (the latest one up to the reference without a year).
    re: W(String.raw`\b(\d{1,2})\s+(${RU_MONTH_RE})(?:\s+(\d{4}))?\b`),
    resolve: (m, now) => {
      const month = ruMonth(m[2]!);
      if (month === null) return null;
      const day = Number(m[1]);
      const ref = new Date(now);
      let year = m[3] ? Number(m[3]) : ref.getUTCFullYear();
      if (!m[3] && utc(year, month, day).getTime() > now) year--;
      const start = utc(year, month, day).getTime();
      return range(start, start + DAY);
    },
  },
  {
    // «в марте», «в мае 2025 года»: that month (the latest one up to the reference without a year).
    re: W(String.raw`\bв\s+(${RU_MONTH_RE})(?:\s+(\d{4}))?\b`),
    resolve: (m, now) => {
      const month = ruMonth(m[1]!);
      if (month === null) return null;
      const ref = new Date(now);
      let year = m[2] ? Number(m[2]) : ref.getUTCFullYear();
      if (!m[2] && month > ref.getUTCMonth()) year--;
      return range(utc(year, month).getTime(), utc(year, month + 1).getTime());
    },
  },
  {
    re: W(String.raw`\bпозавчера\b`),
    resolve: (_m, now) => range(startOfDay(now) - 2 * DAY, startOfDay(now) - DAY),
  },
  {
    // «за последние 3 дня», «за последнюю неделю», «за последний месяц»
    re: W(
      String.raw`\bза\s+последн\p{L}*\s+(?:(\d+|\p{L}+)\s+)?(дн\p{L}*|день|недел\p{L}*|месяц\p{L}*|год\p{L}*|лет)\b`,
    ),
    resolve: (m, now) => range(now - ruCount(m[1]) * ruUnitDays(m[2]!) * DAY, now),
  },
  {
    // «три дня назад», «неделю назад»
    re: W(String.raw`\b(?:(\d+|\p{L}+)\s+)?(дн\p{L}*|день|недел\p{L}*|месяц\p{L}*|год\p{L}*|лет)\s+назад\b`),
    resolve: (m, now) => {
      const unit = ruUnitDays(m[2]!);
      // A word before the unit that is no number («было неделю назад») counts as one.
      const centre = startOfDay(now - ruCount(m[1]) * unit * DAY);
      return unit === 1 ? range(centre, centre + DAY) : range(centre - unit * DAY, centre + unit * DAY);
    },
  },
  {
    re: W(String.raw`\b(recently|lately|recent|these days|недавно|последнее время)\b`),
    resolve: (_m, now) => ({
      kind: 'RECENT',
      since: new Date(now - RECENT_DAYS * DAY),
      until: new Date(now),
    }),
  },
  {
    re: W(String.raw`\b(?:in|on|during|at|from|of|в)\s+(${DATE_RE})\b`),
    resolve: (m) => {
      const d = parseNamedDate(m[1]!);
      return d ? range(d.start.getTime(), d.end.getTime()) : null;
    },
  },
  {
    re: W(
      String.raw`\b(\d{4}-\d{2}-\d{2}|(?:${MONTH_RE})\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{1,2}(?:st|nd|rd|th)?\s+(?:${MONTH_RE})\.?,?\s+\d{4})\b`,
    ),
    resolve: (m) => {
      const d = parseNamedDate(m[1]!);
      return d ? range(d.start.getTime(), d.end.getTime()) : null;
    },
  },
];

/** The first time window named in `query`, resolved against `reference`; null when none. */
export function extractTimeWindow(query: string, reference: Date): TimeWindow | null {
  const now = reference.getTime();
  if (Number.isNaN(now)) throw new Error('the reference time is not a valid date');
  for (const rule of RULES) {
    const m = rule.re.exec(query);
    if (!m) continue;
    const resolved = rule.resolve(m, now);
    if (resolved) return { ...resolved, phrase: m[0].trim() };
  }
  return null;
}
