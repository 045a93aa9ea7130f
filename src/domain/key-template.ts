/**
 * Key templates of domain packs: `service:{name}`, `<method> <path>`, `endpoint:{service}:{method} {path}`.
 * A placeholder is `{name}` or `<name>` (name = [A-Za-z_][A-Za-z0-9_]*) and matches one or more
 * characters; everything else is literal (so `/runs/{}/checkpoints` keeps its `{}`).
 *
 * Matching never uses a regular expression: placeholders are separated by literals, and
 * placing each literal at its leftmost possible position (the last one anchored at the end)
 * finds a match whenever one exists, in linear passes — no backtracking, whatever the input.
 */

export interface KeyTemplate {
  source: string;
  /** literals.length === placeholders.length + 1 */
  literals: string[];
  placeholders: string[];
}

export class TemplateError extends Error {}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}|<([A-Za-z_][A-Za-z0-9_]*)>/g;

export function parseTemplate(source: string): KeyTemplate {
  const literals: string[] = [];
  const placeholders: string[] = [];
  let last = 0;
  for (const m of source.matchAll(PLACEHOLDER)) {
    const literal = source.slice(last, m.index);
    if (placeholders.length > 0 && literal === '') {
      throw new TemplateError(`placeholders must be separated by literal text in "${source}"`);
    }
    const name = (m[1] ?? m[2])!;
    if (placeholders.includes(name))
      throw new TemplateError(`placeholder "${name}" appears twice in "${source}"`);
    literals.push(literal);
    placeholders.push(name);
    last = m.index + m[0].length;
  }
  literals.push(source.slice(last));
  return { source, literals, placeholders };
}

/** The placeholder values when `value` has the template's shape, else null. */
export function matchTemplate(t: KeyTemplate, value: string): Record<string, string> | null {
  const n = t.placeholders.length;
  if (n === 0) return value === t.literals[0] ? {} : null;
  const head = t.literals[0]!;
  const tail = t.literals[n]!;
  if (!value.startsWith(head) || !value.endsWith(tail)) return null;
  const end = value.length - tail.length; // exclusive end of the last placeholder
  const out: Record<string, string> = {};
  let pos = head.length;
  for (let i = 0; i < n - 1; i += 1) {
    const literal = t.literals[i + 1]!;
    const at = value.indexOf(literal, pos + 1); // the placeholder takes at least one character
    // The next placeholder needs at least one character before `end`; a later occurrence
    // would leave even less room, so the leftmost one decides.
    if (at < 0 || at + literal.length > end - 1) return null;
    out[t.placeholders[i]!] = value.slice(pos, at);
    pos = at + literal.length;
  }
  if (end - pos < 1) return null;
  out[t.placeholders[n - 1]!] = value.slice(pos, end);
  return out;
}

/** The template filled in; null when a placeholder has no (non-empty) value. */
export function fillTemplate(t: KeyTemplate, values: Record<string, unknown>): string | null {
  let out = t.literals[0]!;
  for (const [i, name] of t.placeholders.entries()) {
    const v = values[name];
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return null;
    const s = String(v);
    if (s.length === 0) return null;
    out += s + t.literals[i + 1]!;
  }
  return out;
}

/**
 * A SQL LIKE pattern (escape character `\`) for keys of the template's shape with the known
 * placeholders filled in and the others free (`_%`: at least one character).
 */
export function likePattern(t: KeyTemplate, values: Record<string, string>): string {
  const esc = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
  let out = esc(t.literals[0]!);
  for (const [i, name] of t.placeholders.entries()) {
    const v = values[name];
    out += (v !== undefined && v.length > 0 ? esc(v) : '_%') + esc(t.literals[i + 1]!);
  }
  return out;
}
