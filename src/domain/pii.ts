/**
 * Personal data detection and masking. Detection runs on write (to mark items), masking on read
 * (so it works even for items written before a pattern existed). Patterns prefer structure and
 * checksums over bare digit runs: a memory full of SHAs, timestamps and versions must not turn
 * into a wall of `[phone]`.
 */

export const PII_CATEGORIES = ['email', 'phone', 'card', 'passport_rf', 'snils', 'inn'] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];

/** Replacement text used by masking, one per detected category. */
export const PII_PLACEHOLDERS: Readonly<Record<PiiCategory, string>> = {
  email: '[email]',
  phone: '[phone]',
  card: '[card]',
  passport_rf: '[passport]',
  snils: '[snils]',
  inn: '[inn]',
};

export interface PiiSpan {
  category: PiiCategory;
  /** UTF-16 offsets into the scanned text, end exclusive. */
  start: number;
  end: number;
}

/** What gets stored on an item: whether it holds personal data and which kinds. */
export interface PiiMark {
  pii: boolean;
  /** Sorted, unique. Detected categories plus explicit marks such as `fio`. */
  categories: string[];
}

export interface PiiDetection extends PiiMark {
  /** Sorted by start; never overlapping. */
  spans: PiiSpan[];
}

// Every match below lies inside one run of digits and the separators the patterns allow, and
// needs an `@` (email), ten digits of such a run, or eight after a `+` (an E.164 phone): a text
// without any of them holds none, and one scan tells (most texts have no such run).
const RUN_CHAR = '[ \\u00a0().+№-]*';
const MAY_HOLD_PII = new RegExp(`@|\\+${RUN_CHAR}(?:\\d${RUN_CHAR}){8}|(?:\\d${RUN_CHAR}){10}`);

/** False when no pattern of detectPii can match `text` (one scan instead of six). */
export function mayHoldPii(text: string): boolean {
  return MAY_HOLD_PII.test(text);
}

/**
 * Finds personal data in `text`. When patterns overlap, the more specific one wins. Detection
 * runs on a normalised view (see normaliseForDetection) and spans point into `text` itself.
 */
export function detectPii(text: string): PiiDetection {
  const view = normaliseForDetection(text);
  if (!mayHoldPii(view.text)) return { pii: false, categories: [], spans: [] };
  const found = scanView(view.text);
  if (view.text === text) return found;
  return { ...found, spans: found.spans.map((s) => ({ ...s, ...view.source(s.start, s.end) })) };
}

/** Every detector over `text`, without the screen (detectPii's answer whenever it matters). */
export function scanPii(text: string): PiiDetection {
  const view = normaliseForDetection(text);
  const found = scanView(view.text);
  if (view.text === text) return found;
  return { ...found, spans: found.spans.map((s) => ({ ...s, ...view.source(s.start, s.end) })) };
}

function scanView(text: string): PiiDetection {
  const taken = new Uint8Array(text.length);
  const spans: PiiSpan[] = [];
  // Priority order: an email may contain digits, a card or SNILS can look like a phone, a
  // phone's tail can look like a passport or an INN.
  const detectors: [PiiCategory, (t: string) => Array<[number, number]>][] = [
    ['email', findEmails],
    ['card', findCards],
    ['snils', findSnils],
    ['phone', findPhones],
    ['passport_rf', findPassports],
    ['inn', findInns],
  ];
  for (const [category, find] of detectors) {
    for (const [start, end] of find(text)) {
      if (taken.subarray(start, end).some((v) => v === 1)) continue;
      taken.fill(1, start, end);
      spans.push({ category, start, end });
    }
  }
  spans.sort((a, b) => a.start - b.start);
  const categories = [...new Set(spans.map((s) => s.category))].sort();
  return { pii: spans.length > 0, categories, spans };
}

/** Detection over every string leaf of a JSON value (object keys are schema, not data). */
export function detectPiiInJson(value: unknown): PiiMark {
  const found = new Set<string>();
  visitStrings(value, (s) => {
    for (const category of detectPii(s).categories) found.add(category);
  });
  return { pii: found.size > 0, categories: [...found].sort() };
}

/** Union of several marks (e.g. content and data of one observation). */
export function combinePii(...marks: PiiMark[]): PiiMark {
  const categories = new Set(marks.flatMap((m) => m.categories));
  return { pii: marks.some((m) => m.pii) || categories.size > 0, categories: [...categories].sort() };
}

/**
 * Adds a caller's explicit marks (`fio`, `address`, or just `pii`) to what was detected: names
 * and addresses cannot be detected, so the writer has to say so. Marks are lower-cased.
 */
export function mergeExplicit<T extends PiiMark>(detected: T, marks: readonly string[]): T {
  const explicit = marks.map((m) => m.trim().toLowerCase()).filter((m) => m.length > 0);
  const categories = [...new Set([...detected.categories, ...explicit])].sort();
  return { ...detected, pii: detected.pii || explicit.length > 0, categories };
}

/** Replaces every detected value with its category placeholder, e.g. `[email]`. */
export function maskPii(text: string): string {
  const { spans } = detectPii(text);
  if (spans.length === 0) return text;
  let out = '';
  let cursor = 0;
  for (const span of spans) {
    out += text.slice(cursor, span.start) + PII_PLACEHOLDERS[span.category];
    cursor = span.end;
  }
  return out + text.slice(cursor);
}

/** Masks every string leaf of a JSON value; keys, numbers and structure are kept. */
export function maskJson<T>(value: T): T {
  return mapStrings(value, maskPii) as T;
}

function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, fn));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, fn);
    return out;
  }
  return value;
}

function visitStrings(value: unknown, fn: (s: string) => void): void {
  if (typeof value === 'string') fn(value);
  else if (Array.isArray(value)) for (const item of value) visitStrings(item, fn);
  else if (isPlainObject(value)) for (const item of Object.values(value)) visitStrings(item, fn);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// ---------------------------------------------------------------------------------------------
// Normalisation: what a reader sees, not how it is encoded

/** The text detectors run on, and where each of its spans lies in the original. */
export interface DetectionView {
  text: string;
  /** The original [start, end) of a span of `text`. */
  source(start: number, end: number): { start: number; end: number };
}

// Invisible in print: soft hyphen, zero-width space/joiners, word joiner, BOM, Mongolian vowel separator.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/u;
// `alice(at)example(dot)com`, `[at]`, `{dot}`: the usual ways of hiding an address from scrapers.
const OBFUSCATED = /^ ?[([{] ?(at|dot) ?[)\]}] ?/i;
// Between two digits: dots, slashes and middle dots, alone or with spaces (`415 . 555`, `415/555`).
const DIGIT_JOINER = /^[ \u00a0]{0,2}[./\u00b7\u2022\u2027\u2219\u30fb][ \u00a0]{0,2}/u;
// Printable ASCII but the characters that may start an `(at)` or a joiner (space, `(`, `.`,
// `/`, `[`, `{`); a space followed by such a plain character starts neither.
const PLAIN_RUN =
  /(?:[\x21-\x27\x29-\x2d\x30-\x5a\x5c-\x7a\x7c-\x7e]| (?=[\x21-\x27\x29-\x2d\x30-\x5a\x5c-\x7a\x7c-\x7e]))+/y;
const NEEDS_VIEW = /[^\t\n\r\u0020-\u007e]|[([{] ?(?:at|dot) ?[)\]}]|\d ?[./] ?\d/i;

/**
 * NFKC per character (fullwidth digits and `＠`, non-breaking spaces become plain), every
 * decimal digit mapped to ASCII (Arabic-Indic, Devanagari…), invisible characters dropped,
 * `(at)`/`(dot)` read as `@`/`.`, and a dot, slash or middle dot between digits read as `-`,
 * so `4111.1111.1111.1111`, `415·555·0144` and `ali\u00adce@example.com` look like what they are.
 */
export function normaliseForDetection(text: string): DetectionView {
  if (!NEEDS_VIEW.test(text)) return { text, source: (start, end) => ({ start, end }) };
  // Where each character of the view comes from is asked only of a text that holds personal
  // data (rare): the view is built again then, with its positions.
  let mapped: ReturnType<typeof viewOf> | null = null;
  return {
    text: viewOf(text, false).text,
    source: (start, end) => {
      mapped ??= viewOf(text, true);
      const { from, to, length } = mapped;
      return {
        start: start >= 0 && start < length ? from![start]! : text.length,
        end: end >= 1 && end <= length ? to![end - 1]! : text.length,
      };
    },
  };
}

function viewOf(
  text: string,
  withPositions: boolean,
): { text: string; from: Int32Array | null; to: Int32Array | null; length: number } {
  // Invisible characters go first (all in the BMP), so they cannot split what the rest reads.
  let clean = text;
  let at: number[] | null = null;
  if (INVISIBLE.test(text)) {
    clean = '';
    at = [];
    for (let i = 0; i < text.length; i += 1) {
      if (INVISIBLE.test(text[i]!)) continue;
      clean += text[i];
      at.push(i);
    }
  }
  const origin = (i: number) => (at ? at[i]! : i);
  let out = '';
  // The last three characters of `out`, kept apart: slicing `out` itself flattens it each time.
  let tail = '';
  // Where each character of `out` comes from; `out` is never longer than `clean`.
  const from = withPositions ? new Int32Array(clean.length) : null;
  const to = withPositions ? new Int32Array(clean.length) : null;
  let n = 0;
  const emit = (s: string, start: number, end: number) => {
    for (let k = 0; k < s.length; k += 1) {
      out += s[k];
      if (from && to) {
        from[n] = origin(start);
        to[n] = origin(end - 1) + 1;
      }
      n += 1;
    }
    tail = (tail + s).slice(-3);
  };
  for (let i = 0; i < clean.length; ) {
    const code = clean.charCodeAt(i);
    // Each test below needs a space, a bracket, a joiner or a character beyond ASCII where it
    // starts: any other printable ASCII character is its own view (NFKC and the digit mapping
    // leave ASCII as it is), and most of a text is runs of such characters, copied whole.
    PLAIN_RUN.lastIndex = i;
    const run = PLAIN_RUN.exec(clean);
    if (run) {
      out += run[0];
      if (from && to) {
        for (let k = i; k < i + run[0].length; k += 1) {
          const o = at ? at[k]! : k;
          from[n + k - i] = o;
          to[n + k - i] = o + 1;
        }
      }
      n += run[0].length;
      tail = (tail + run[0].slice(-3)).slice(-3);
      i += run[0].length;
      continue;
    }
    const width = clean.codePointAt(i)! > 0xffff ? 2 : 1;
    const ch = clean.slice(i, i + width);
    const obfuscated = OBFUSCATED.exec(clean.slice(i, i + 8));
    // Groups of two or more digits on both sides (a lone leading 1 is a country code): a
    // decimal such as `7707083893.5` stays a decimal. Only the end of `out` matters: testing
    // the whole of it for every character would make a long text quadratic.
    const joiner = /(?:\d\d|(?:^|[^\d])1)$/.test(tail) ? DIGIT_JOINER.exec(clean.slice(i, i + 6)) : null;
    const after = joiner ? asciiDigits(clean.slice(i + joiner[0].length, i + joiner[0].length + 4)) : '';
    if (obfuscated) {
      emit(obfuscated[1]!.toLowerCase() === 'at' ? '@' : '.', i, i + obfuscated[0].length);
      i += obfuscated[0].length;
    } else if (joiner && /^\d\d/.test(after)) {
      emit('-', i, i + joiner[0].length);
      i += joiner[0].length;
    } else {
      // Only one-for-one compatibility forms (fullwidth, no-break): `№` must not become `No`.
      // ASCII is its own form and holds only ASCII digits.
      const compatible = code < 0x80 ? ch : ch.normalize('NFKC');
      const view = code < 0x80 ? ch : asciiDigits(compatible.length === 1 ? compatible : ch);
      emit(view, i, i + width);
      i += width;
    }
  }
  return { text: out, from, to, length: n };
}

/** Decimal digits of any script as ASCII (a run of ten \p{Nd} code points starts at zero). */
function asciiDigits(s: string): string {
  let out = '';
  for (const ch of s) {
    if (/\p{Nd}/u.test(ch) && !/[0-9]/.test(ch)) {
      let cp = ch.codePointAt(0)!;
      let value = 0;
      while (/\p{Nd}/u.test(String.fromCodePoint(cp - 1)) && value < 9) {
        cp -= 1;
        value += 1;
      }
      out += String(value);
    } else out += ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checksums

/** Luhn (mod 10) check used by payment cards. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * SNILS control number (Pension Fund of Russia rule): Σ dᵢ·(9−i) over the 9 digits; below 100
 * it is the control number, 100 and 101 give 00, above 101 take mod 101 (and 100 again → 00).
 * Numbers up to 001-001-998 predate the rule and carry no checksum.
 */
export function snilsValid(value: string): boolean {
  const digits = value.replace(/[ -]/g, '');
  if (!/^\d{11}$/.test(digits)) return false;
  const base = digits.slice(0, 9);
  if (/^0+$/.test(base)) return false;
  if (Number(base) <= 1_001_998) return true;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * (9 - i);
  const rest = sum % 101;
  return (rest === 100 ? 0 : rest) === Number(digits.slice(9));
}

const INN_W10 = [2, 4, 10, 3, 5, 9, 4, 6, 8];
const INN_W11 = [7, 2, 4, 10, 3, 5, 9, 4, 6, 8];
const INN_W12 = [3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8];

/** INN control digits: 10 digits (organisation) or 12 digits (person), weights per FNS. */
export function innValid(value: string): boolean {
  if (!/^(\d{10}|\d{12})$/.test(value) || /^(\d)\1+$/.test(value)) return false;
  const control = (weights: number[]) =>
    (weights.reduce((sum, w, i) => sum + w * (value.charCodeAt(i) - 48), 0) % 11) % 10;
  if (value.length === 10) return control(INN_W10) === Number(value[9]);
  return control(INN_W11) === Number(value[10]) && control(INN_W12) === Number(value[11]);
}

// ---------------------------------------------------------------------------------------------
// Finders: each returns [start, end) pairs of plausible values.

const WORD_CHAR = /[\p{L}\p{N}_]/u;
const ASCII_ALNUM = /[0-9A-Za-z]/;

/**
 * A match must stand alone: not glued to a word, and not one segment of a UUID, a version,
 * a path, a time or a decimal (`…-446655440000`, `1.2.3`, `12:30`).
 */
function isolated(text: string, start: number, end: number): boolean {
  const before = text.charAt(start - 1);
  const before2 = text.charAt(start - 2);
  if (before && WORD_CHAR.test(before)) return false;
  if ((before === '.' || before === '-' || before === '/') && ASCII_ALNUM.test(before2)) return false;
  if (before === ':' && /\d/.test(before2)) return false;
  const after = text.charAt(end);
  if (after && WORD_CHAR.test(after)) return false;
  if ('.-/:'.includes(after) && after !== '' && /\d/.test(text.charAt(end + 1))) return false;
  return true;
}

function hasKeywordBefore(text: string, start: number, keyword: RegExp): boolean {
  return keyword.test(text.slice(Math.max(0, start - 40), start));
}

const EMAIL =
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}_%+-][\p{L}\p{N}._%+-]*@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,63}(?![\p{L}\p{N}_-])/gu;

// File extensions that are not top-level domains: `logo@2x.png`, `icon@3x.webp`, `pkg@1.2.json`.
const FILE_EXTENSIONS = new Set(
  'png jpg jpeg gif svg webp ico bmp tif tiff avif heic pdf txt json yaml yml toml xml html htm css js mjs cjs ts tsx jsx vue lock log csv tsv'.split(
    ' ',
  ),
);

// Valid addresses of rarer shapes: a quoted local part (`"a b"@example.com`), a host without a
// dot (`alice@localhost`) or an address literal (`alice@[127.0.0.1]`).
const LOCAL_PART = '(?:"[^"\\n@]{1,64}"|[\\p{L}\\p{N}_%+-][\\p{L}\\p{N}._%+-]*)';
const RARE_EMAIL = new RegExp(
  `(?<![\\p{L}\\p{N}._%+-])(?:${LOCAL_PART}@(?:localhost|\\[[0-9A-Fa-f.:-]{2,45}\\])|"[^"\\n@]{1,64}"@[\\p{L}\\p{N}-]+(?:\\.[\\p{L}\\p{N}-]+)*\\.\\p{L}{2,63})(?![\\p{L}\\p{N}_-])`,
  'gu',
);

function findEmails(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const m of text.matchAll(EMAIL)) {
    const tld = m[0].slice(m[0].lastIndexOf('.') + 1).toLowerCase();
    if (!FILE_EXTENSIONS.has(tld)) found.push([m.index, m.index + m[0].length]);
  }
  for (const m of text.matchAll(RARE_EMAIL)) found.push([m.index, m.index + m[0].length]);
  return found.sort((a, b) => a[0] - b[0]);
}

/** A window of consecutive digit groups of a candidate, as seen by a validator. */
interface DigitWindow {
  /** All digits of the window, separators removed. */
  digits: string;
  /** Digit count of each group, in order. */
  groups: number[];
  /** The window starts with the candidate's leading `+`. */
  plus: boolean;
}

/**
 * Slides over the digit groups of a candidate and keeps, from each starting group, the
 * longest window that `accept` likes. This lets `+7 916 123-45-67 2024` yield the phone
 * without the trailing year. Windows whose digit count is out of range are never built.
 */
function windows(
  text: string,
  candidate: RegExp,
  limits: { maxGroups: number; minDigits: number; maxDigits: number },
  accept: (window: DigitWindow) => boolean,
): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const m of text.matchAll(candidate)) {
    const match = m[0];
    const allDigits = match.replace(/\D/g, '');
    if (allDigits.length < limits.minDigits) continue;
    // Each group: [start, end) in text (a `(…)` group includes its parentheses) and digit count.
    const starts: number[] = [];
    const ends: number[] = [];
    const lengths: number[] = [];
    const prefix = [0];
    for (let i = 0; i < match.length; ) {
      const paren = match.charCodeAt(i) === 40; // (
      let j = paren ? i + 1 : i;
      const first = j;
      while (j < match.length && isDigit(match.charCodeAt(j))) j++;
      if (j === first) {
        i++;
        continue;
      }
      lengths.push(j - first);
      prefix.push(prefix[prefix.length - 1]! + j - first);
      if (paren && match.charCodeAt(j) === 41) j++; // )
      starts.push(m.index + i);
      ends.push(m.index + j);
      i = j;
    }
    if (match.startsWith('+')) starts[0] = m.index;
    let i = 0;
    while (i < lengths.length) {
      let matchedTo = -1;
      for (let j = Math.min(lengths.length - 1, i + limits.maxGroups - 1); j >= i; j--) {
        const count = prefix[j + 1]! - prefix[i]!;
        if (count < limits.minDigits) break;
        if (count > limits.maxDigits) continue;
        const window = {
          digits: allDigits.slice(prefix[i], prefix[j + 1]),
          groups: lengths.slice(i, j + 1),
          plus: i === 0 && match.startsWith('+'),
        };
        if (accept(window) && isolated(text, starts[i]!, ends[j]!)) {
          found.push([starts[i]!, ends[j]!]);
          matchedTo = j;
          break;
        }
      }
      i = matchedTo >= 0 ? matchedTo + 1 : i + 1;
    }
  }
  return found;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

const CARD_CANDIDATE = /\d+(?:[ -]\d+)*/g;

function findCards(text: string): Array<[number, number]> {
  return windows(
    text,
    CARD_CANDIDATE,
    { maxGroups: 6, minDigits: 13, maxDigits: 19 },
    ({ digits, groups }) => {
      // Groups of a printed card are 3–6 digits (4-4-4-4, Amex 4-6-5); a single group is bare.
      if (groups.length > 1 && groups.some((n) => n < 3 || n > 6)) return false;
      // Issuer networks start with 2–6 (Mir, Amex/JCB, Visa, Mastercard, Discover/UnionPay);
      // this also keeps 13-digit millisecond timestamps (1…) out.
      if (digits[0]! < '2' || digits[0]! > '6') return false;
      return luhnValid(digits);
    },
  );
}

const SNILS = /\d{3}([ -])\d{3}\1\d{3}[ -]\d{2}|(?<!\d)\d{11}(?!\d)/g;
const SNILS_KEYWORD = /(?:снилс|snils)\D{0,20}$/iu;

function findSnils(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const m of text.matchAll(SNILS)) {
    const start = m.index;
    const end = start + m[0].length;
    // A bare 11-digit run is common (phones, ids): without the word nearby it counts only when
    // its control number holds (numbers of the checksum era, one random run in a hundred).
    const bare = m[1] === undefined;
    const checked = Number(m[0].replace(/\D/g, '').slice(0, 9)) > 1_001_998;
    if (bare && !checked && !hasKeywordBefore(text, start, SNILS_KEYWORD)) continue;
    if (isolated(text, start, end) && snilsValid(m[0])) found.push([start, end]);
  }
  return found;
}

// Series (2+2 digits, optionally split) and 6-digit number, e.g. `4510 123456`, `45 10 № 123456`.
const PASSPORT = /\d{2} ?\d{2} (?:№ ?)?\d{6}|(?<!\d)\d{10}(?!\d)/g;
const PASSPORT_KEYWORD = /(?:паспорт|passport)\D{0,30}$/iu;

function findPassports(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const m of text.matchAll(PASSPORT)) {
    const start = m.index;
    const end = start + m[0].length;
    const digits = m[0].replace(/\D/g, '');
    const bare = digits.length === m[0].length;
    if (bare && !hasKeywordBefore(text, start, PASSPORT_KEYWORD)) continue;
    if (digits.startsWith('00') || digits.endsWith('000000')) continue;
    if (isolated(text, start, end)) found.push([start, end]);
  }
  return found;
}

const DIGIT_RUN = /(?<!\d)\d{10,12}(?!\d)/g;

function findInns(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const m of text.matchAll(DIGIT_RUN)) {
    const end = m.index + m[0].length;
    if (innValid(m[0]) && isolated(text, m.index, end)) found.push([m.index, end]);
  }
  return found;
}

// Digit groups joined by single spaces/hyphens, with an optional leading `+` and `(area)` groups.
const SEP = '[ \\u00a0-]';
const PAREN = '\\(\\d{1,5}\\)';
const PHONE_CANDIDATE = new RegExp(
  `(?:\\+[ \\u00a0]?)?(?:${PAREN}${SEP}?)?\\d+(?:(?:${SEP}(?:${PAREN}${SEP}?)?|${PAREN}${SEP}?)\\d+)*`,
  'g',
);

// Dots join digits in versions, dates and addresses too, so a dotted number counts only in the
// North American shape: [+1.]415.555.0144 (area code and exchange start with 2–9).
const DOTTED_US_PHONE = /(?:\+?1\.)?[2-9]\d{2}\.[2-9]\d{2}\.\d{4}/g;

function findPhones(text: string): Array<[number, number]> {
  const dotted: Array<[number, number]> = [];
  for (const m of text.matchAll(DOTTED_US_PHONE)) {
    const end = m.index + m[0].length;
    if (isolated(text, m.index, end)) dotted.push([m.index, end]);
  }
  return [...dotted, ...groupedPhones(text), ...bareNorthAmerican(text)];
}

// Ten bare digits in the North American plan (area code and exchange start with 2–9; Unix
// timestamps start with 1), unless a valid INN or named as an INN or passport number.
const BARE_NANP = /(?<!\d)[2-9]\d{2}[2-9]\d{6}(?!\d)/g;
const ID_KEYWORD = /(?:инн|inn|паспорт|passport)\D{0,30}$/iu;

function bareNorthAmerican(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const m of text.matchAll(BARE_NANP)) {
    const end = m.index + m[0].length;
    if (innValid(m[0]) || hasKeywordBefore(text, m.index, ID_KEYWORD)) continue;
    if (isolated(text, m.index, end)) found.push([m.index, end]);
  }
  return found;
}

function groupedPhones(text: string): Array<[number, number]> {
  return windows(
    text,
    PHONE_CANDIDATE,
    { maxGroups: 8, minDigits: 8, maxDigits: 15 },
    ({ digits, groups, plus }) => {
      if (plus) {
        // E.164: no country code starts with 0; +7 and +1 numbers are exactly 11 digits.
        if (digits[0] === '0') return false;
        if (digits[0] === '7' || digits[0] === '1') return digits.length === 11;
        return true;
      }
      // Russian trunk prefix: 8 (916) 123-45-67; bare only for mobile numbers (8 9xx…).
      if (digits.length === 11 && (digits[0] === '8' || digits[0] === '7'))
        return groups.length > 1 || digits[1] === '9';
      // Ten digits need the shape of a local number: 3-digit area code, then groups of 2–4…
      if (digits.length === 10 && groups.length > 1)
        return groups[0] === 3 && groups.every((n) => n >= 2 && n <= 4);
      // North American numbers written with their country code: 1 415 555 0144.
      if (digits.length === 11 && groups.length > 1) return /^1[2-9]\d{2}[2-9]\d{6}$/.test(digits);
      return false;
    },
  );
}
