/**
 * Safety of caller-supplied regular expressions (domain pack `idPatterns` and JSON Schema
 * `pattern`s). JavaScript's engine backtracks, so a pattern such as `(a+)+$` takes exponential
 * time on a near-miss input and blocks the event loop. Packs are accepted only when a
 * conservative static check finds none of the known shapes of catastrophic backtracking and a
 * short runtime probe on adversarial, length-capped inputs stays fast.
 *
 * The static check parses the pattern (Unicode mode, as it is compiled) into a small AST and
 * rejects:
 * - backreferences (`\1`, `\k<name>`): matching them is not even regular;
 * - a quantifier without an upper bound over a body holding a variable-length quantifier
 *   (`(a+)+`, `(a*)*`, `(\s*,\w+)*`, `(a{1,5})+`) — exponential;
 * - a repeated body (max > 1) holding an unbounded quantifier (`(a+){10}`) — polynomial of
 *   the repeat count's degree;
 * - an alternation inside a repeated body whose branches can start with the same character or
 *   match the empty string (`(a|a)*`, `(a|ab)+`, `(\w|\d)+`, `(a|)*`) — exponential;
 * - three or more unbounded quantifiers whose character sets all overlap (`.*a.*b.*`) — cubic
 *   or worse;
 * plus limits on the pattern's length and quantifier count. It is deliberately conservative:
 * some safe patterns are refused; the message says which rule and where, so they can be
 * rewritten (usually with a bounded quantifier or a disjoint character class).
 */

export const MAX_PATTERN_LENGTH = 512;
export const MAX_QUANTIFIERS = 24;
/** Inputs that idPatterns and schema patterns are run on are never longer than this. */
export const MAX_MATCH_INPUT = 4096;

export interface RegexVerdict {
  ok: boolean;
  /** Short rule name: syntax, length, backreference, nested-quantifier, ... */
  rule?: string;
  message?: string;
}

// ------------------------------------------------------------------ character sets

/** Sorted, disjoint, inclusive code point ranges. */
type CharSet = [number, number][];

const MAX_CP = 0x10ffff;
const ALL: CharSet = [[0, MAX_CP]];
const DIGIT: CharSet = [[0x30, 0x39]];
const WORD: CharSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: CharSet = normalise([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: CharSet = normalise([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]);

function normalise(ranges: CharSet): CharSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: CharSet = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function union(...sets: CharSet[]): CharSet {
  return normalise(sets.flat().map(([a, b]) => [a, b] as [number, number]));
}

function complement(set: CharSet): CharSet {
  const out: CharSet = [];
  let next = 0;
  for (const [lo, hi] of normalise(set)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

function intersects(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [alo, ahi] = a[i]!;
    const [blo, bhi] = b[j]!;
    if (alo <= bhi && blo <= ahi) return true;
    if (ahi < bhi) i += 1;
    else j += 1;
  }
  return false;
}

/** With the `i` flag, ASCII letters match both cases (enough for an overlap estimate). */
function caseFold(set: CharSet): CharSet {
  const extra: CharSet = [];
  for (const [lo, hi] of set) {
    for (const [from, to, delta] of [
      [0x41, 0x5a, 32],
      [0x61, 0x7a, -32],
    ] as const) {
      const a = Math.max(lo, from);
      const b = Math.min(hi, to);
      if (a <= b) extra.push([a + delta, b + delta]);
    }
  }
  return union(set, extra);
}

/** A printable character of the set, to build probe inputs from. */
function sampleOf(set: CharSet): string {
  for (const [lo, hi] of set) {
    for (const preferred of [0x61, 0x41, 0x30, 0x5f, 0x2d, 0x20]) {
      if (preferred >= lo && preferred <= hi) return String.fromCodePoint(preferred);
    }
  }
  for (const [lo, hi] of set) {
    const cp = Math.max(lo, 0x21);
    if (cp <= hi && (cp < 0xd800 || cp > 0xdfff)) return String.fromCodePoint(cp);
  }
  return 'a';
}

// ------------------------------------------------------------------ AST

type Node =
  | { t: 'char'; set: CharSet }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; branches: Node[]; at: number }
  | { t: 'group'; body: Node }
  | { t: 'look'; body: Node }
  | { t: 'assert' }
  | { t: 'repeat'; body: Node; min: number; max: number; at: number; text: string };

class RegexSyntaxError extends Error {}

class Parser {
  private i = 0;
  quantifiers = 0;
  backreference: string | null = null;

  constructor(
    private readonly src: string,
    private readonly ignoreCase: boolean,
    private readonly dotAll: boolean,
  ) {}

  parse(): Node {
    const node = this.disjunction();
    if (this.i < this.src.length) throw new RegexSyntaxError(`unexpected "${this.src[this.i]}" at ${this.i}`);
    return node;
  }

  private peek(): string | undefined {
    return this.src[this.i];
  }

  private disjunction(): Node {
    const at = this.i;
    const branches = [this.alternative()];
    while (this.peek() === '|') {
      this.i += 1;
      branches.push(this.alternative());
    }
    return branches.length === 1 ? branches[0]! : { t: 'alt', branches, at };
  }

  private alternative(): Node {
    const items: Node[] = [];
    while (this.i < this.src.length && this.peek() !== '|' && this.peek() !== ')') {
      items.push(this.term());
    }
    return { t: 'seq', items };
  }

  private term(): Node {
    const start = this.i;
    const c = this.peek()!;
    if (c === '^' || c === '$') {
      this.i += 1;
      return { t: 'assert' };
    }
    let atom: Node;
    let quantifiable = true;
    if (c === '(') {
      const group = this.group();
      atom = group.node;
      quantifiable = !group.lookaround;
    } else if (c === '[') {
      atom = { t: 'char', set: this.fold(this.charClass()) };
    } else if (c === '.') {
      this.i += 1;
      atom = { t: 'char', set: this.dotAll ? ALL : complement(LINE_TERMINATORS) };
    } else if (c === '\\') {
      const escaped = this.atomEscape();
      if (escaped === null) return { t: 'assert' };
      atom = escaped;
    } else if ('*+?'.includes(c)) {
      throw new RegexSyntaxError(`nothing to repeat at ${this.i}`);
    } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.i))) {
      throw new RegexSyntaxError(`nothing to repeat at ${this.i}`);
    } else if (c === ']' || c === '{' || c === '}') {
      throw new RegexSyntaxError(`lone "${c}" at ${this.i} (escape it)`);
    } else {
      const cp = this.src.codePointAt(this.i)!;
      this.i += cp > 0xffff ? 2 : 1;
      atom = { t: 'char', set: this.fold([[cp, cp]]) };
    }
    const q = this.quantifier();
    if (!q) return atom;
    if (!quantifiable) throw new RegexSyntaxError(`a lookaround cannot be repeated (at ${start})`);
    this.quantifiers += 1;
    return {
      t: 'repeat',
      body: atom,
      min: q.min,
      max: q.max,
      at: start,
      text: this.src.slice(start, this.i),
    };
  }

  private fold(set: CharSet): CharSet {
    return this.ignoreCase ? caseFold(set) : set;
  }

  private quantifier(): { min: number; max: number } | null {
    const c = this.peek();
    let q: { min: number; max: number } | null = null;
    if (c === '*') q = { min: 0, max: Number.POSITIVE_INFINITY };
    else if (c === '+') q = { min: 1, max: Number.POSITIVE_INFINITY };
    else if (c === '?') q = { min: 0, max: 1 };
    if (q) this.i += 1;
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return null;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
      if (max < min) throw new RegexSyntaxError(`numbers out of order in {${m[1]},${m[3]}}`);
      this.i += m[0].length;
      q = { min, max };
    }
    if (q && this.peek() === '?') this.i += 1; // lazy: same backtracking behaviour on failure
    return q;
  }

  private group(): { node: Node; lookaround: boolean } {
    this.i += 1; // (
    let lookaround = false;
    if (this.src.startsWith('?:', this.i)) this.i += 2;
    else if (this.src.startsWith('?=', this.i) || this.src.startsWith('?!', this.i)) {
      this.i += 2;
      lookaround = true;
    } else if (this.src.startsWith('?<=', this.i) || this.src.startsWith('?<!', this.i)) {
      this.i += 3;
      lookaround = true;
    } else if (this.src.startsWith('?<', this.i)) {
      const m = /^\?<([A-Za-z_$][A-Za-z0-9_$]*)>/.exec(this.src.slice(this.i));
      if (!m) throw new RegexSyntaxError(`invalid group name at ${this.i}`);
      this.i += m[0].length;
    } else if (this.peek() === '?') {
      throw new RegexSyntaxError(`unsupported group syntax at ${this.i}`);
    }
    const body = this.disjunction();
    if (this.peek() !== ')') throw new RegexSyntaxError('unterminated group');
    this.i += 1;
    return { node: lookaround ? { t: 'look', body } : { t: 'group', body }, lookaround };
  }

  /** An escape outside a class; null for assertions (\b, \B). */
  private atomEscape(): Node | null {
    this.i += 1; // backslash
    const c = this.peek();
    if (c === undefined) throw new RegexSyntaxError('\\ at end of pattern');
    if (c === 'b' || c === 'B') {
      this.i += 1;
      return null;
    }
    if (/[1-9]/.test(c)) {
      this.backreference ??= `\\${c}`;
      while (/\d/.test(this.peek() ?? '')) this.i += 1;
      return { t: 'char', set: ALL };
    }
    if (c === 'k') {
      const m = /^k<([^>]*)>/.exec(this.src.slice(this.i));
      if (!m) throw new RegexSyntaxError('invalid \\k escape');
      this.backreference ??= `\\k<${m[1]}>`;
      this.i += m[0].length;
      return { t: 'char', set: ALL };
    }
    return { t: 'char', set: this.fold(this.classEscape()) };
  }

  /** Escapes valid both inside and outside classes (Unicode mode). */
  private classEscape(): CharSet {
    const c = this.src[this.i]!;
    this.i += 1;
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return complement(DIGIT);
      case 'w':
        return this.ignoreCase ? caseFold(WORD) : WORD;
      case 'W':
        return complement(WORD);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 't':
        return [[9, 9]];
      case 'n':
        return [[10, 10]];
      case 'v':
        return [[11, 11]];
      case 'f':
        return [[12, 12]];
      case 'r':
        return [[13, 13]];
      case '0':
        if (/\d/.test(this.peek() ?? '')) throw new RegexSyntaxError('invalid octal escape');
        return [[0, 0]];
      case 'c': {
        const letter = this.peek();
        if (!letter || !/[A-Za-z]/.test(letter)) throw new RegexSyntaxError('invalid \\c escape');
        this.i += 1;
        const cp = letter.charCodeAt(0) % 32;
        return [[cp, cp]];
      }
      case 'x': {
        const m = /^[0-9A-Fa-f]{2}/.exec(this.src.slice(this.i));
        if (!m) throw new RegexSyntaxError('invalid \\x escape');
        this.i += 2;
        const cp = Number.parseInt(m[0], 16);
        return [[cp, cp]];
      }
      case 'u': {
        const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(this.src.slice(this.i));
        const plain = /^[0-9A-Fa-f]{4}/.exec(this.src.slice(this.i));
        const m = braced ?? plain;
        if (!m) throw new RegexSyntaxError('invalid \\u escape');
        this.i += m[0].length;
        const cp = Number.parseInt(braced ? braced[1]! : m[0], 16);
        if (cp > MAX_CP) throw new RegexSyntaxError('code point out of range');
        return [[cp, cp]];
      }
      case 'p':
      case 'P': {
        const m = /^\{[A-Za-z0-9_=]+\}/.exec(this.src.slice(this.i));
        if (!m) throw new RegexSyntaxError(`invalid \\${c} escape`);
        this.i += m[0].length;
        return ALL; // a Unicode property: unknown extent, assume it overlaps everything
      }
      default:
        if ('^$\\.*+?()[]{}|/-'.includes(c)) {
          const cp = c.codePointAt(0)!;
          return [[cp, cp]];
        }
        throw new RegexSyntaxError(`invalid escape \\${c}`);
    }
  }

  private charClass(): CharSet {
    this.i += 1; // [
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.i += 1;
    }
    const parts: CharSet[] = [];
    while (this.peek() !== ']') {
      if (this.i >= this.src.length) throw new RegexSyntaxError('unterminated character class');
      const lo = this.classAtom();
      if (this.peek() === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i += 1;
        const hi = this.classAtom();
        if (lo.length !== 1 || hi.length !== 1 || lo[0]![0] !== lo[0]![1] || hi[0]![0] !== hi[0]![1]) {
          throw new RegexSyntaxError('invalid range with a class escape');
        }
        if (hi[0]![0] < lo[0]![0]) throw new RegexSyntaxError('range out of order in character class');
        parts.push([[lo[0]![0], hi[0]![0]]]);
      } else {
        parts.push(lo);
      }
    }
    this.i += 1; // ]
    const set = union(...parts);
    return negate ? complement(set) : set;
  }

  private classAtom(): CharSet {
    const c = this.peek()!;
    if (c === '\\') {
      this.i += 1;
      if (this.peek() === 'b') {
        this.i += 1;
        return [[8, 8]];
      }
      return this.classEscape();
    }
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return [[cp, cp]];
  }
}

// ------------------------------------------------------------------ analyses

function nullable(n: Node): boolean {
  switch (n.t) {
    case 'char':
      return false;
    case 'seq':
      return n.items.every(nullable);
    case 'alt':
      return n.branches.some(nullable);
    case 'group':
      return nullable(n.body);
    case 'look':
    case 'assert':
      return true;
    case 'repeat':
      return n.min === 0 || nullable(n.body);
  }
}

/** Characters a match can start with. */
function firstChars(n: Node): CharSet {
  switch (n.t) {
    case 'char':
      return n.set;
    case 'seq': {
      const sets: CharSet[] = [];
      for (const item of n.items) {
        sets.push(firstChars(item));
        if (!nullable(item)) break;
      }
      return union(...sets);
    }
    case 'alt':
      return union(...n.branches.map(firstChars));
    case 'group':
    case 'repeat':
      return firstChars(n.body);
    case 'look':
    case 'assert':
      return [];
  }
}

/** Every character the node can consume. */
function allChars(n: Node): CharSet {
  switch (n.t) {
    case 'char':
      return n.set;
    case 'seq':
      return union(...n.items.map(allChars));
    case 'alt':
      return union(...n.branches.map(allChars));
    case 'group':
    case 'repeat':
      return allChars(n.body);
    case 'look':
    case 'assert':
      return [];
  }
}

function* walk(n: Node): Generator<Node> {
  yield n;
  switch (n.t) {
    case 'seq':
      for (const i of n.items) yield* walk(i);
      break;
    case 'alt':
      for (const b of n.branches) yield* walk(b);
      break;
    case 'group':
    case 'look':
    case 'repeat':
      yield* walk(n.body);
      break;
    default:
      break;
  }
}

function describeRepeat(r: Extract<Node, { t: 'repeat' }>): string {
  const text = r.text.length > 40 ? `${r.text.slice(0, 37)}...` : r.text;
  return `"${text}" at ${r.at}`;
}

function staticVerdict(root: Node): RegexVerdict {
  const repeats = [...walk(root)].filter((n): n is Extract<Node, { t: 'repeat' }> => n.t === 'repeat');
  for (const outer of repeats) {
    if (outer.max <= 1) continue;
    const inner = [...walk(outer.body)];
    for (const r of inner) {
      if (r.t !== 'repeat') continue;
      if (outer.max === Number.POSITIVE_INFINITY && r.max > r.min) {
        return {
          ok: false,
          rule: 'nested-quantifier',
          message: `nested quantifier: ${describeRepeat(outer)} repeats a variable-length quantifier (catastrophic backtracking)`,
        };
      }
      if (r.max === Number.POSITIVE_INFINITY) {
        return {
          ok: false,
          rule: 'nested-quantifier',
          message: `nested quantifier: ${describeRepeat(outer)} repeats an unbounded quantifier (polynomial backtracking)`,
        };
      }
    }
    for (const a of inner) {
      if (a.t !== 'alt') continue;
      if (a.branches.some(nullable)) {
        return {
          ok: false,
          rule: 'overlapping-alternation',
          message: `alternation at ${a.at} inside repeated ${describeRepeat(outer)} has a branch that matches the empty string`,
        };
      }
      const firsts = a.branches.map(firstChars);
      for (let x = 0; x < firsts.length; x += 1) {
        for (let y = x + 1; y < firsts.length; y += 1) {
          if (intersects(firsts[x]!, firsts[y]!)) {
            return {
              ok: false,
              rule: 'overlapping-alternation',
              message: `alternation at ${a.at} inside repeated ${describeRepeat(outer)} has branches ${x + 1} and ${y + 1} that can start with the same character (catastrophic backtracking)`,
            };
          }
        }
      }
    }
  }
  const unbounded = repeats
    .filter((r) => r.max === Number.POSITIVE_INFINITY)
    .map((r) => ({ r, set: allChars(r.body) }));
  for (let x = 0; x < unbounded.length; x += 1) {
    for (let y = x + 1; y < unbounded.length; y += 1) {
      if (!intersects(unbounded[x]!.set, unbounded[y]!.set)) continue;
      for (let z = y + 1; z < unbounded.length; z += 1) {
        if (
          intersects(unbounded[x]!.set, unbounded[z]!.set) &&
          intersects(unbounded[y]!.set, unbounded[z]!.set)
        ) {
          return {
            ok: false,
            rule: 'overlapping-quantifiers',
            message: `three unbounded quantifiers over overlapping characters (${describeRepeat(unbounded[x]!.r)}, ${describeRepeat(unbounded[y]!.r)}, ${describeRepeat(unbounded[z]!.r)}): polynomial backtracking`,
          };
        }
      }
    }
  }
  return { ok: true };
}

// ------------------------------------------------------------------ runtime probe

/** Probe inputs: runs of each character the pattern uses, then a character it likely rejects. */
function probeInputs(root: Node): string[] {
  const samples = new Set<string>();
  for (const n of walk(root)) if (n.t === 'char' && n.set.length > 0) samples.add(sampleOf(n.set));
  const chars = [...samples].slice(0, 12);
  const tails = ['\u0000', '!', ' '];
  const inputs: string[] = [];
  // Small steps: an exponential pattern grows ~4x per step, so the first run over budget is
  // never more than a few budgets long.
  for (const length of [8, 12, 16, 18, 20, 22, 24, 26, 28]) {
    for (const c of chars) for (const tail of tails) inputs.push(c.repeat(length) + tail);
    const mixed = chars.join('');
    if (mixed.length > 0) {
      for (const tail of tails)
        inputs.push(mixed.repeat(Math.ceil(length / mixed.length)).slice(0, length) + tail);
    }
  }
  return inputs;
}

export const PROBE_BUDGET_MS = 150;

/**
 * The runtime guard: runs the compiled pattern on adversarial inputs of growing length (all
 * far below MAX_MATCH_INPUT) and refuses it if any run exceeds the budget. Lengths grow slowly
 * so an exponential pattern that escaped the static check is caught before a run gets long.
 */
function runtimeProbe(re: RegExp, root: Node, budgetMs: number): RegexVerdict {
  for (const input of probeInputs(root)) {
    const started = performance.now();
    re.lastIndex = 0;
    re.test(input);
    const ms = performance.now() - started;
    if (ms > budgetMs) {
      return {
        ok: false,
        rule: 'runtime-probe',
        message: `a ${input.length}-character probe took ${Math.round(ms)} ms (catastrophic backtracking)`,
      };
    }
  }
  return { ok: true };
}

// ------------------------------------------------------------------ entry points

export const ALLOWED_FLAGS = /^[imsu]*$/;

/** Compiles a caller's pattern the way memgate runs it (always in Unicode mode). */
export function compilePattern(source: string, flags = ''): RegExp {
  const unique = [...new Set(`${flags}u`)].join('');
  return new RegExp(source, unique);
}

/** Static check + runtime probe; `ok: false` carries the rule and a message naming the problem. */
export function checkRegexSafety(source: string, flags = ''): RegexVerdict {
  if (source.length === 0) return { ok: false, rule: 'syntax', message: 'the pattern is empty' };
  if (source.length > MAX_PATTERN_LENGTH) {
    return {
      ok: false,
      rule: 'length',
      message: `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`,
    };
  }
  if (!ALLOWED_FLAGS.test(flags)) {
    return { ok: false, rule: 'flags', message: `flags may only be i, m, s, u (got "${flags}")` };
  }
  let re: RegExp;
  try {
    re = compilePattern(source, flags);
  } catch (error) {
    return { ok: false, rule: 'syntax', message: `invalid regular expression: ${(error as Error).message}` };
  }
  let root: Node;
  const parser = new Parser(source, flags.includes('i'), flags.includes('s'));
  try {
    root = parser.parse();
  } catch (error) {
    if (error instanceof RegexSyntaxError) return { ok: false, rule: 'syntax', message: error.message };
    throw error;
  }
  if (parser.backreference) {
    return {
      ok: false,
      rule: 'backreference',
      message: `backreferences (${parser.backreference}) are not allowed`,
    };
  }
  if (parser.quantifiers > MAX_QUANTIFIERS) {
    return { ok: false, rule: 'length', message: `more than ${MAX_QUANTIFIERS} quantifiers` };
  }
  const verdict = staticVerdict(root);
  if (!verdict.ok) return verdict;
  return runtimeProbe(re, root, PROBE_BUDGET_MS);
}

/** The runtime guard alone (no static check), for tests and diagnostics. */
export function probePattern(source: string, flags = '', budgetMs = PROBE_BUDGET_MS): RegexVerdict {
  const re = compilePattern(source, flags);
  const root = new Parser(source, flags.includes('i'), flags.includes('s')).parse();
  return runtimeProbe(re, root, budgetMs);
}
