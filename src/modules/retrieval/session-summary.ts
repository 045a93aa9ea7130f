import { salientLine, statesChange } from '../../domain/salient-text.js';
import { contentWords, fieldWords, matchCount } from './compiler/state-match.js';

/**
 * The text of a session compact, pure: built once per session (no query) and fitted to a pack
 * per query. Lines are whole sentences chosen by the rule entity summaries use too
 * (`domain/salient-text.ts`); a line too long is cut at a word, never inside one.
 */

export const COMPACT_MAX_CHARS = 2000;
const LINE_CHARS = 220;

/** One line per message: all of a short one; of a longer one, its first sentence and every one that states a change. */
function messageLine(content: string): string | null {
  const line = salientLine(content, LINE_CHARS - 2);
  return line === null ? null : `- ${line}`;
}

export function extractiveSummary(
  sessionId: string,
  messages: { content: string; occurredAt: Date }[],
): string {
  const first = messages[0]?.occurredAt;
  const last = messages[messages.length - 1]?.occurredAt;
  const day = (d: Date | undefined) => (d ? d.toISOString().slice(0, 10) : '?');
  const header = `Session ${sessionId}: ${messages.length} messages, ${day(first)} – ${day(last)}.`;
  const lines = messages.map((m) => messageLine(m.content)).filter((l): l is string => l !== null);
  // Over the cap, lines that state no change go first, the latest of them first.
  const room = COMPACT_MAX_CHARS - header.length;
  const kept = dropUntil(
    lines,
    (l) => (statesChange(l) ? 1 : 0),
    (k) => k.join('\n').length + 1 <= room,
  );
  return [header, ...kept].join('\n');
}

/**
 * `lines` in their order, less those dropped until `ok` holds: the lowest priority first, the
 * latest first among equals.
 */
function dropUntil(
  lines: readonly string[],
  priority: (line: string) => number,
  ok: (kept: string[]) => boolean,
): string[] {
  const ranked = lines.map((line, i) => ({ line, i, p: priority(line) }));
  const dropOrder = [...ranked].sort((a, b) => a.p - b.p || b.i - a.i);
  const dropped = new Set<number>();
  const kept = () => ranked.filter((k) => !dropped.has(k.i)).map((k) => k.line);
  for (const k of dropOrder) {
    if (ok(kept())) break;
    dropped.add(k.i);
  }
  return kept();
}

/**
 * A compact fitted to a pack: whole lines only. `fits` says whether a text may be served; lines
 * are dropped until it does — first those that neither answer the query nor state a change, then
 * those that only state a change, the latest first. Null when not even the header fits.
 */
export function fitSummary(summary: string, query: string, fits: (text: string) => boolean): string | null {
  if (fits(summary)) return summary;
  const [header, ...lines] = summary.split('\n');
  if (header === undefined || !fits(header)) return null;
  const words = contentWords(query);
  const priority = (line: string) =>
    (matchCount(words, fieldWords(line)) > 0 ? 2 : 0) + (statesChange(line) ? 1 : 0);
  return [header, ...dropUntil(lines, priority, (kept) => fits([header, ...kept].join('\n')))].join('\n');
}
