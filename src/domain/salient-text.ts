import { collapseWhitespace } from './whitespace.js';

/**
 * The extractive rule both summaries use (a session's compact, an entity's summary): from a text,
 * keep the sentences that carry meaning for the reader — those that name what the summary is
 * about and those that state a change — rather than the first ones. Pure and deterministic.
 */

/** Words that say something changed: such a sentence is kept even when it is not a text's first. */
const CHANGE =
  /\b(?:now|no longer|instead|moved?|moves|moving|switch(?:ed|es|ing)?|chang(?:ed|es|ing)|replac(?:ed|es|ing)|takes? over|took over|handed|postponed?|delayed?|rescheduled?|cancel(?:l?ed)?|renamed?|promoted|left|joins|joined|starting|decided|agreed|from \S+ to)\b/i;

export function statesChange(sentence: string): boolean {
  return CHANGE.test(sentence);
}

/** Sentences of a text, each ending at its stop (or at the end). */
export function sentencesOf(text: string): string[] {
  return (text.match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)/g) ?? []).map((s) => s.trim()).filter(Boolean);
}

/** A line cut to at most `max` characters at a word boundary, with an ellipsis when cut. */
export function cutAtWord(line: string, max: number): string {
  if (line.length <= max) return line;
  const head = line.slice(0, max - 1);
  const space = head.lastIndexOf(' ');
  return `${(space > max / 2 ? head.slice(0, space) : head).trimEnd()}…`;
}

/** Whether `sentence` holds one of `names` as a whole word (case-insensitive). */
function names(sentence: string, lowerNames: readonly string[]): boolean {
  const lower = sentence.toLowerCase();
  return lowerNames.some((n) => {
    const at = lower.indexOf(n);
    if (at < 0) return false;
    const before = at === 0 ? ' ' : lower[at - 1]!;
    const after = lower[at + n.length] ?? ' ';
    return !/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after);
  });
}

/**
 * The salient part of one text, at most `max` characters: all of it when it fits; else, in their
 * order, the sentences that name one of `about` (when given) or state a change, and the first
 * sentence when `about` is empty or no sentence names it; cut at a word. Null for an empty text.
 */
export function salientLine(content: string, max: number, about: readonly string[] = []): string | null {
  const text = collapseWhitespace(content).trim();
  if (!text) return null;
  if (text.length <= max) return text;
  const sentences = sentencesOf(text);
  const lowerNames = about.map((n) => n.toLowerCase()).filter((n) => n.length > 1);
  const naming = (s: string) => lowerNames.length > 0 && names(s, lowerNames);
  const named = sentences.some(naming);
  const kept = sentences.filter((s, i) => naming(s) || statesChange(s) || (i === 0 && !named));
  return cutAtWord((kept.length > 0 ? kept : [text]).join(' '), max);
}
