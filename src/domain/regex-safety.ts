/**
 * Caller-supplied regular expressions (domain pack `idPatterns` and JSON Schema `pattern`s).
 *
 * JavaScript's own engine backtracks: `a*a*c`, `.*.*x` or `(a+)+$` take polynomial or
 * exponential time on a near-miss input and block the event loop, and no static heuristic
 * catches every such shape. So user patterns never run on it: they are compiled with RE2JS, a
 * pure-JavaScript port of RE2 whose matching time is linear in the input, and checked here:
 * - syntax, flags (i, m, s, u) and length (MAX_PATTERN_LENGTH);
 * - no backreferences and no lookarounds (not regular, RE2 has neither);
 * - the compiled program has at most MAX_PROGRAM_SIZE instructions: linear time still costs
 *   input × program, and counted repeats (`a{0,1000}`) grow the program;
 * - inputs longer than MAX_MATCH_INPUT are not matched at all.
 * A MatchBudget bounds how long one request spends matching in total.
 *
 * RE2 differs from JavaScript in a few classes: `\s` is ASCII whitespace only, `.` excludes only
 * `\n`, and Unicode scripts are written `\p{Greek}` (not `\p{Script=Greek}`). `\d`, `\w`, `\b`,
 * `\p{L}`, named groups `(?<id>...)` and `\u{...}` escapes work as in JavaScript's `u` mode.
 */
import { RE2JS } from 're2js';

export const MAX_PATTERN_LENGTH = 512;
/** Instructions of the compiled RE2 program: bounds the per-character cost of a match. */
export const MAX_PROGRAM_SIZE = 1000;
/** Inputs that idPatterns and schema patterns are run on are never longer than this. */
export const MAX_MATCH_INPUT = 4096;

export const ALLOWED_FLAGS = /^[imsu]*$/;

export interface RegexVerdict {
  ok: boolean;
  /** Short rule name: syntax, flags, length, size, backreference, lookaround. */
  rule?: string;
  message?: string;
}

export interface PatternMatch {
  /** The whole match. */
  text: string;
  /** Named groups that took part in the match. */
  groups: Readonly<Record<string, string>>;
  /** The first capture group, when it took part. */
  firstGroup: string | null;
  /** Where the match starts in the input (UTF-16 code units, as String.prototype.slice counts). */
  index: number;
}

/** A compiled user pattern; it matches in time linear in the input. */
export interface UserPattern {
  readonly source: string;
  readonly flags: string;
  /** Whether the pattern occurs anywhere in the input. */
  test(input: string): boolean;
  /** Up to `limit` non-overlapping matches, left to right. */
  findAll(input: string, limit: number): PatternMatch[];
}

export class PatternError extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

/** How long one request may spend matching user patterns, summed over its matches. */
export class MatchBudget {
  private spentMs = 0;

  constructor(readonly limitMs: number) {}

  get exhausted(): boolean {
    return this.spentMs >= this.limitMs;
  }

  /** Runs one match and charges its time; the caller checks `exhausted` before the next. */
  charge<T>(match: () => T): T {
    const started = performance.now();
    try {
      return match();
    } finally {
      this.spentMs += performance.now() - started;
    }
  }
}

function flagBits(flags: string): number {
  let bits = 0;
  if (flags.includes('i')) bits |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) bits |= RE2JS.MULTILINE;
  if (flags.includes('s')) bits |= RE2JS.DOTALL;
  return bits; // `u` is implied: RE2 always matches code points
}

/** Backreferences and lookarounds (outside character classes), which RE2 does not have. */
function unsupportedConstruct(source: string): PatternError | null {
  let inClass = false;
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) {
        return new PatternError('backreference', `backreferences (\\${next}) are not allowed`);
      }
      i += 1;
    } else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (!inClass && c === '(' && /^\(\?<?[=!]/.test(source.slice(i, i + 4))) {
      return new PatternError('lookaround', `lookarounds are not supported (at ${i})`);
    }
  }
  return null;
}

/** Names the rule an RE2 error breaks, so the message says what to rewrite. */
function classifySyntaxError(message: string): PatternError {
  if (/expression too large|invalid repeat count: `\{\d*,?\d{4,}\}`/.test(message)) {
    return new PatternError(
      'size',
      `the pattern is too large: ${message.replace(/^error parsing regexp: /, '')}`,
    );
  }
  return new PatternError(
    'syntax',
    `invalid regular expression: ${message.replace(/^error parsing regexp: /, '')}`,
  );
}

function compileRe2(source: string, flags: string): RE2JS {
  if (source.length === 0) throw new PatternError('syntax', 'the pattern is empty');
  if (source.length > MAX_PATTERN_LENGTH) {
    throw new PatternError('length', `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  if (!ALLOWED_FLAGS.test(flags)) {
    throw new PatternError('flags', `flags may only be i, m, s, u (got "${flags}")`);
  }
  try {
    // Compiling (never matching) with JavaScript's engine pins the accepted syntax to
    // JavaScript's `u` mode, so the translation below only sees what it understands.
    new RegExp(source, 'u');
  } catch (error) {
    throw new PatternError('syntax', `invalid regular expression: ${(error as Error).message}`);
  }
  const unsupported = unsupportedConstruct(source);
  if (unsupported) throw unsupported;
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(source), flagBits(flags));
  } catch (error) {
    throw classifySyntaxError((error as Error).message);
  }
  const size = programSize(re);
  if (size > MAX_PROGRAM_SIZE) {
    throw new PatternError(
      'size',
      `the compiled pattern has ${size} instructions, at most ${MAX_PROGRAM_SIZE} (use smaller repeat counts)`,
    );
  }
  return re;
}

function programSize(re: RE2JS): number {
  const prog = re.re2().prog as { inst?: unknown[] };
  return prog.inst?.length ?? 0;
}

function groupNames(re: RE2JS): string[] {
  return Object.keys(re.re2().namedGroups ?? {});
}

/** Compiles a caller's pattern for the linear-time engine; throws PatternError. */
export function compilePattern(source: string, flags = ''): UserPattern {
  const re = compileRe2(source, flags);
  const names = groupNames(re);
  return {
    source,
    flags,
    test: (input) => input.length <= MAX_MATCH_INPUT && re.test(input),
    findAll(input, limit) {
      if (input.length > MAX_MATCH_INPUT || limit <= 0 || !re.test(input)) return [];
      const matcher = re.matcher(input);
      const found: PatternMatch[] = [];
      while (found.length < limit && matcher.find()) {
        const groups: Record<string, string> = {};
        for (const name of names) {
          const value = matcher.group(name);
          if (typeof value === 'string' && value !== '') groups[name] = value;
        }
        const first = matcher.groupCount() > 0 ? matcher.group(1) : null;
        found.push({
          text: matcher.group(0) ?? '',
          groups,
          firstGroup: first ?? null,
          index: matcher.start(),
        });
      }
      return found;
    },
  };
}

/** Whether the pattern may be stored; `ok: false` carries the rule and a message naming the problem. */
export function checkRegexSafety(source: string, flags = ''): RegexVerdict {
  try {
    compileRe2(source, flags);
    return { ok: true };
  } catch (error) {
    if (error instanceof PatternError) return { ok: false, rule: error.rule, message: error.message };
    throw error;
  }
}
