/**
 * Rule extraction, pure: domain-pack extractors run over text and give candidate statements
 * with the span they were read from. Resolution of names to entity keys happens afterwards
 * against the namespace's gazetteer (store/gazetteer-store.ts); what stays unknown becomes a
 * placeholder of the extractor's kind, keyed by `placeholderKey`.
 */
import type { CompiledExtractor } from '../../domain/domain-pack.js';
import { MAX_MATCH_INPUT, type PatternMatch } from '../../domain/regex-safety.js';

/** A statement one extractor read from one text. */
export interface RuleMatch {
  extractor: string;
  pack: string;
  subjectName: string;
  subjectKind: string;
  /** Set for relation extractors. */
  predicate: string | null;
  objectName: string | null;
  objectKind: string | null;
  /** Set for attribute extractors. */
  attribute: string | null;
  value: string | null;
  confidence: number;
  /** [start, end) in UTF-16 code units of the source text, and the matched text. */
  span: [number, number];
  matched: string;
}

/** Most a single text contributes: a pathological message cannot flood the graph. */
export const MAX_MATCHES_PER_TEXT = 50;
const MAX_NAME_CHARS = 200;

/**
 * The pieces extractors run on: lines (a statement rarely spans a line break), each cut to at
 * most MAX_MATCH_INPUT characters, the bound the regex-safety probes assume.
 */
export function textPieces(text: string): { offset: number; text: string }[] {
  const pieces: { offset: number; text: string }[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    for (let at = 0; at < line.length; at += MAX_MATCH_INPUT) {
      pieces.push({ offset: offset + at, text: line.slice(at, at + MAX_MATCH_INPUT) });
    }
    offset += line.length + 1;
  }
  return pieces;
}

/** Every extractor over every piece; matches in text order, at most MAX_MATCHES_PER_TEXT. */
export function applyExtractors(extractors: readonly CompiledExtractor[], text: string): RuleMatch[] {
  if (extractors.length === 0 || text.trim() === '') return [];
  const matches: RuleMatch[] = [];
  for (const piece of textPieces(text)) {
    for (const x of extractors) {
      for (const m of x.re.findAll(piece.text, MAX_MATCHES_PER_TEXT)) {
        const match = ruleMatchOf(x, m, piece.offset);
        if (match) matches.push(match);
      }
    }
  }
  matches.sort((a, b) => a.span[0] - b.span[0] || a.extractor.localeCompare(b.extractor));
  return dedupe(matches).slice(0, MAX_MATCHES_PER_TEXT);
}

function ruleMatchOf(x: CompiledExtractor, m: PatternMatch, offset: number): RuleMatch | null {
  const groups: Readonly<Record<string, string | undefined>> = m.groups;
  const subjectName = cleanName(groups.subject);
  const objectName = x.predicate ? cleanName(groups.object) : null;
  const value = x.attribute ? cleanValue(groups.value) : null;
  if (!subjectName || (x.predicate && !objectName) || (x.attribute && value === null)) return null;
  const start = offset + m.index;
  return {
    extractor: x.name,
    pack: x.pack,
    subjectName,
    subjectKind: x.subjectKind,
    predicate: x.predicate ?? null,
    objectName,
    objectKind: x.predicate ? (x.objectKind ?? 'entity') : null,
    attribute: x.attribute ?? null,
    value,
    confidence: x.confidence,
    span: [start, start + m.text.length],
    matched: m.text,
  };
}

/** Trims punctuation a sentence leaves around a name; empty or overlong names are dropped. */
export function cleanName(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const name = raw
    .replace(/\s+/g, ' ')
    .replace(/^[\s"'«»“”„(]+|[\s"'«»“”„).,;:!?]+$/gu, '')
    .trim();
  return name === '' || name.length > MAX_NAME_CHARS ? null : name;
}

function cleanValue(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const value = raw
    .replace(/\s+/g, ' ')
    .replace(/[\s.,;:!?]+$/u, '')
    .trim();
  return value === '' || value.length > 1000 ? null : value;
}

/** The same statement read twice (two extractors, overlapping patterns) counts once. */
function dedupe(matches: RuleMatch[]): RuleMatch[] {
  const seen = new Set<string>();
  return matches.filter((m) => {
    const id = [
      fold(m.subjectName),
      m.predicate,
      m.objectName && fold(m.objectName),
      m.attribute,
      m.value,
    ].join('\u0000');
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Case and punctuation folding, as the gazetteer folds names (entity-link-store). */
export function fold(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * The key of an entity only known by a name so far: `<kind>:<slug>`, the slug the folded name
 * with hyphens ("Alice Martin" as a person → `person:alice-martin`; Cyrillic stays Cyrillic).
 */
export function placeholderKey(kind: string, name: string): string {
  const slug = fold(name).replace(/ /g, '-').slice(0, 200);
  return `${kind}:${slug || 'unnamed'}`;
}
