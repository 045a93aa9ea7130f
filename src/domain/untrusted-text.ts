/**
 * Text from outside (emails, transcripts, agent notes, documents) ends up inside prompts.
 * Before rendering it we make sure it can neither pass for instructions nor for the structure
 * of our own context text. Nothing is deleted except invisible characters: flagged lines are
 * kept (they may be legitimate content) but prefixed with a visible marker, and the tokens that
 * carry structure are defused by swapping their angle brackets for the single angle quotes
 * ‹ and ›. The text goes to a model, not a browser: HTML entities would only garble it
 * ("Design &gt; Risks"), so none are used.
 */

import { collapseWhitespace } from './whitespace.js';

/** First line of every rendered context text. */
export const CONTEXT_BANNER = '=== memgate context ===';

/** Section headers of rendered context text, in pack order. */
export const SECTION_HEADERS = {
  current: '## CURRENT',
  currentState: '## CURRENT STATE',
  summaries: '## SUMMARIES',
  relevantFacts: '## RELEVANT FACTS',
  episodes: '## EPISODES',
  documents: '## DOCUMENTS',
  relatedEntities: '## RELATED ENTITIES',
  recentObservations: '## RECENT OBSERVATIONS',
  sources: '## SOURCES',
} as const;
export type SectionKey = keyof typeof SECTION_HEADERS;

/** Opening fence is `<<<source <label>>>`; see {@link fenceOpen}. */
export const FENCE_OPEN_PREFIX = '<<<source';
export const FENCE_CLOSE = '<<<end>>>';

/** Prefix of a line of untrusted text that looked like an instruction or like our structure. */
export const UNTRUSTED_MARKER = '[untrusted] ';

const MAX_LABEL_CHARS = 200;

/** `<<<source label>>>` with the label made single-line and unable to close the fence early. */
export function fenceOpen(label: string): string {
  return `${FENCE_OPEN_PREFIX} ${sanitizeLabel(label)}>>>`;
}

/** Wraps untrusted text in our fence, neutralised: `<<<source label>>>\n…\n<<<end>>>`. */
export function renderDelimited(label: string, text: string): string {
  const body = neutralizeUntrusted(text);
  return body ? `${fenceOpen(label)}\n${body}\n${FENCE_CLOSE}` : `${fenceOpen(label)}\n${FENCE_CLOSE}`;
}

/**
 * A label (title, key, path) reduced to one visible line that cannot close the fence: an
 * angle bracket standing alone between spaces ("Design > Risks") is kept, any other becomes
 * an angle quote (">>>" → "›››", "<system>" → "‹system›").
 */
export function sanitizeLabel(label: string): string {
  const clean = collapseWhitespace(stripInvisible(normalizeNewlines(label)))
    .trim()
    .replace(/(?<! )[<>]|[<>](?! )/g, defuseAngles);
  if (!clean) return 'untitled';
  // A string has at least as many UTF-16 units as code points: most labels need no count.
  if (clean.length <= MAX_LABEL_CHARS) return clean;
  const chars = Array.from(clean);
  return chars.length > MAX_LABEL_CHARS ? `${chars.slice(0, MAX_LABEL_CHARS - 1).join('')}…` : clean;
}

/**
 * Neutralises untrusted text for rendering into a prompt:
 * - line breaks are normalised (a lone `\r` could hide a line from a human reader) and
 *   control, bidi-override and invisible characters are removed (`\n` and `\t` are kept);
 * - fence tokens (`<<<`) and fake role tokens (`<|im_start|>`, `[INST]`, `<<SYS>>`, `</s>`,
 *   `<system>`…) are escaped so they stay readable but are no longer tokens;
 * - lines that read as instructions (“ignore previous instructions”, “you are now…”), role
 *   markers at line start (`System:`, `User:`), prompt-format headings (`### Instruction`) and
 *   look-alikes of our own headers are prefixed with {@link UNTRUSTED_MARKER}, and a leading
 *   `#`/`=` run is backslash-escaped;
 * - runs of blank lines collapse to one, and surrounding blank lines are dropped.
 */
export function neutralizeUntrusted(text: string): string {
  const lines = stripInvisible(normalizeNewlines(text)).split('\n');
  const flagged = lines.map((line) => looksHostile(line));
  // An instruction split over two lines is still an instruction.
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!flagged[i] && !flagged[i + 1] && isInstruction(`${lines[i]} ${lines[i + 1]}`)) {
      flagged[i] = true;
      flagged[i + 1] = true;
    }
  }
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const escaped = escapeTokens(lines[i]!);
    const line = (
      flagged[i] || escaped.changed ? UNTRUSTED_MARKER + escapeLeadingStructure(escaped.text) : escaped.text
    ).trimEnd();
    if (line === '' && (out.length === 0 || out[out.length - 1] === '')) continue;
    out.push(line);
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

function normalizeNewlines(text: string): string {
  // CR, NEL, LS, PS, VT and FF all break lines somewhere; make every break visible as \n.
  return text.replace(/\r\n?|[\u0085\u2028\u2029\v\f]/g, '\n');
}

// C0/C1 controls except \t and \n, bidi embeddings/overrides/isolates and marks, zero-width
// space, word joiner, BOM, soft hyphen, and Unicode tag characters (invisible “ASCII smuggling”).
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|\udb40[\udc00-\udc7f]/g;

function stripInvisible(text: string): string {
  return text.replace(INVISIBLE, '');
}

const TOKEN_PATTERNS: Array<[RegExp, (match: string) => string]> = [
  // Our fence opener and closer both start with `<<<` (also full-width / small-form variants).
  [/[<\uff1c\ufe64]{3,}/g, (m) => '‹'.repeat(Array.from(m).length)],
  // Chat-template special tokens: <|im_start|>, <|system|>, <|endoftext|>…
  [/<\||\|>/g, defuseAngles],
  // Llama-style markers.
  [/\[\s*(\/?)\s*INST\s*\]/gi, (m) => (m.includes('/') ? '(/INST)' : '(INST)')],
  [/<<\s*\/?\s*SYS\s*>>/gi, defuseAngles],
  // Role-like tags and end-of-sequence tokens: <system>, </assistant>, <s>, </s>…
  [
    /<\s*\/?\s*(?:system|assistant|user|developer|human|tool|instructions?|prompt|s|sys|im_start|im_end|memgate)\b[^<>\n]{0,100}>/gi,
    defuseAngles,
  ],
];

/** "<" → "‹", ">" → "›": still readable, no longer a token (and no HTML entity to garble it). */
function defuseAngles(text: string): string {
  return text.replace(/</g, '‹').replace(/>/g, '›');
}

// Every token pattern needs one of these characters: a line without any is left as it is.
const TOKEN_CHARS = /[<>|[\uff1c\ufe64]/;

function escapeTokens(line: string): { text: string; changed: boolean } {
  if (!TOKEN_CHARS.test(line)) return { text: line, changed: false };
  let text = line;
  for (const [pattern, replace] of TOKEN_PATTERNS) text = text.replace(pattern, replace);
  return { text, changed: text !== line };
}

// A leading run of `#` or `=` is what makes a line look like a heading or our banner.
function escapeLeadingStructure(line: string): string {
  return line.replace(
    /^(\s*)([#=]+)/,
    (_m, space: string, marks: string) => space + marks.replace(/[#=]/g, '\\$&'),
  );
}

function looksHostile(line: string): boolean {
  const folded = fold(line);
  if (folded === '') return false;
  const latin = latinSkeleton(folded);
  return (
    matchesInstruction(folded, latin) ||
    ROLE_LINE.test(latin) ||
    ROLE_LINE_RU.test(folded) ||
    PROMPT_HEADING.test(latin) ||
    isHeaderLookalike(latin)
  );
}

const INSTRUCTION_EN: RegExp[] = [
  /\b(?:ignore|disregard|forget|override|bypass)\b.{0,60}\b(?:instructions?|prompts?|rules|guidelines|directives|constraints|above)\b/,
  /\byou are now\b/,
  /\bfrom now on\b.{0,30}\byou\b/,
  /\bpretend (?:to be|you are)\b/,
  /\bnew (?:system )?instructions?\b/,
  /\bsystem prompt\b/,
  /\b(?:developer|god|dan) mode\b/,
  /\bjailbreak/,
  /\bdo anything now\b/,
];

// `\b` is ASCII-only in JavaScript, so the Russian patterns use letter lookarounds.
const INSTRUCTION_RU: RegExp[] = [
  /(?:игнорируй|проигнорируй|забудь|отмени|не обращай внимания на)[\p{L}]*.{0,60}(?:инструкци|указани|правил|промпт)/u,
  /(?<!\p{L})(?:ты|вы) теперь(?!\p{L})/u,
  /(?<!\p{L})теперь (?:ты|вы)(?!\p{L})/u,
  /(?<!\p{L})нов(?:ые|ая) инструкци/u,
  /(?<!\p{L})системн(?:ый|ая|ое) (?:промпт|инструкци|сообщени)/u,
];

function isInstruction(text: string): boolean {
  const folded = fold(text);
  return matchesInstruction(folded, latinSkeleton(folded));
}

// Every Russian pattern spells Cyrillic letters: a text without any skips them.
const CYRILLIC = /[\u0400-\u04ff]/;

// Takes the folded text and its skeleton, which a caller that has them does not compute twice.
function matchesInstruction(folded: string, latin: string): boolean {
  return (
    INSTRUCTION_EN.some((r) => r.test(latin)) ||
    (CYRILLIC.test(folded) && INSTRUCTION_RU.some((r) => r.test(folded)))
  );
}

// `System:`, `assistant :`, `[user]`, `>>> Human:` at the start of a line.
const ROLE_LINE = /^[\s>*_[(-]*(?:system|assistant|user|developer|human|ai|instructions?)[\s*_\])]*:/;
const ROLE_LINE_RU = /^[\s>*_[(-]*(?:система|ассистент|пользователь|человек)[\s*_\])]*:/u;
const ROLE_BRACKET = /^\s*\[(?:system|assistant|user|developer)\]/;
// Prompt-format headings: `### Instruction`, `## System prompt`, `### Response:`.
const PROMPT_HEADING =
  /^\s*(?:#{1,6}|={2,})\s*(?:instructions?|system|prompt|system prompt|response|input|output|assistant|user|context)\b/;

const HEADER_NAMES = [...Object.values(SECTION_HEADERS), CONTEXT_BANNER].map(compact);

// `##  Relevant   Facts`, `# RELEVANT FACTS ##`, `=== MEMGATE CONTEXT ===`, `## rеlevant facts`
// (with a Cyrillic е): anything starting like a heading whose letters spell one of ours.
function isHeaderLookalike(latin: string): boolean {
  if (ROLE_BRACKET.test(latin)) return true;
  if (!/^\s*[#=]/.test(latin)) return false;
  const letters = compact(latin);
  return letters.includes('memgate') || HEADER_NAMES.includes(letters);
}

function compact(text: string): string {
  return latinSkeleton(fold(text)).replace(/[^a-z0-9]/g, '');
}

// NFKC folds full-width and mathematical letters (`ｉｇｎｏｒｅ`, `𝐢𝐠𝐧𝐨𝐫𝐞`) to plain ones.
function fold(text: string): string {
  return collapseWhitespace(
    text
      .normalize('NFKC')
      .toLowerCase()
      .replace(/[\u200c\u200d]/g, ''),
  ).trim();
}

// Letters that render like Latin ones; only used for matching, never for output.
const CONFUSABLES: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  һ: 'h',
  ӏ: 'l',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

function latinSkeleton(folded: string): string {
  return folded.replace(/[\u0370-\u03ff\u0400-\u052f]/g, (ch) => CONFUSABLES[ch] ?? ch);
}
