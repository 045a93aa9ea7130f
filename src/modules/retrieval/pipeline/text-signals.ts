/**
 * Three signals read from the rows a read has already loaded (no statement of their own), added
 * to the fused score as tie-breaks of a rank step or two:
 *
 * - label: the item's label (title, heading) holds a word of the query. An observation's title
 *   names its actor ("message · Caroline · …"), so "what did Caroline say…" prefers Caroline's
 *   own words; a document's title or section heading works as the field match of BM25F.
 * - terms: the share of the query's distinctive words that the item's OWN text holds. Lexical
 *   matching runs over the contextual index (a turn with its neighbours' words), so a turn and
 *   its neighbours match alike; this lets the turn that says the words itself lead. Each query
 *   word weighs by how rare it is among the loaded candidates (ln(1 + N / (1 + df))), so words
 *   every candidate holds (names, "what", "did") weigh almost nothing, in any language.
 * - asking: the item's own text ends with a question. Memory is searched for what was said; a
 *   turn that asks holds the query's words but seldom the answer, which the next turn gives
 *   (on LoCoMo dev, 29% of the candidates end asking against 12% of the evidence turns).
 */
import { BONUS } from './fusion.js';

export interface TextSignalItem {
  title: string | null;
  heading?: string | null;
  text: string;
}

export interface TextSignals {
  /** BONUS.labelMatch when the label holds a word of the query, else 0. */
  label: number;
  /** BONUS.ownTermsMax × the share of the query's weight the own text holds. */
  terms: number;
  /** −BONUS.askingPenalty when the own text ends with a question mark, else 0. */
  asking: number;
}

/** The signals of an item read without a query. */
export const NO_TEXT_SIGNALS: TextSignals = { label: 0, terms: 0, asking: 0 };

const WORD = /[\p{L}\p{N}_]+/gu;
/** Shorter words are mostly function words or fragments of dates. */
const MIN_WORD_CHARS = 3;
/** A text that ends asking: a question mark (Latin, full-width, Arabic) last, closing quotes aside. */
const ENDS_ASKING = /[?？؟][\s"'»”’)\]]*$/u;

/** Words of a text as the signals compare them: runs of letters and digits, case-folded. */
export function matchWords(text: string | null | undefined): Set<string> {
  const out = new Set<string>();
  for (const w of (text ?? '').toLowerCase().normalize('NFKC').match(WORD) ?? []) {
    if (w.length >= MIN_WORD_CHARS) out.add(w);
  }
  return out;
}

const WORD_CHAR_LAST = /[\p{L}\p{N}_]$/u;
const WORD_CHAR_FIRST = /^[\p{L}\p{N}_]/u;

/**
 * Which of `words` (matchWords of a query) are words of `text`, i.e. `matchWords(text).has(w)`
 * for each: an occurrence with no letter, digit or `_` on either side is a whole word. Looking
 * the few query words up costs far less than collecting every word of every candidate.
 */
function heldWords(text: string, words: readonly string[]): Set<string> {
  const folded = text.toLowerCase().normalize('NFKC');
  const held = new Set<string>();
  for (const w of words) {
    for (let at = folded.indexOf(w); at >= 0; at = folded.indexOf(w, at + 1)) {
      const end = at + w.length;
      // Two units either side: a letter outside the BMP is a surrogate pair.
      if (at > 0 && WORD_CHAR_LAST.test(folded.slice(Math.max(0, at - 2), at))) continue;
      if (end < folded.length && WORD_CHAR_FIRST.test(folded.slice(end, end + 2))) continue;
      held.add(w);
      break;
    }
  }
  return held;
}

/** The signals of each item, in the order given; all 0 when the query has no word to compare. */
export function textSignals(query: string, items: readonly TextSignalItem[]): TextSignals[] {
  const queryWords = [...matchWords(query)];
  if (queryWords.length === 0 || items.length === 0) return items.map(() => NO_TEXT_SIGNALS);
  const own = items.map((i) => heldWords(i.text, queryWords));
  const n = items.length;
  const weight = new Map<string, number>();
  for (const w of queryWords) {
    const df = own.reduce((count, words) => count + (words.has(w) ? 1 : 0), 0);
    weight.set(w, Math.log(1 + n / (1 + df)));
  }
  const total = [...weight.values()].reduce((a, b) => a + b, 0);
  return items.map((item, i) => {
    // A timestamp in a title is not a name: numbers do not count as a label match.
    const label = [...matchWords(`${item.title ?? ''} ${item.heading ?? ''}`)].some(
      (w) => !/^\p{N}+$/u.test(w) && weight.has(w),
    );
    let held = 0;
    for (const [w, wt] of weight) if (own[i]!.has(w)) held += wt;
    return {
      label: label ? BONUS.labelMatch : 0,
      terms: total > 0 ? BONUS.ownTermsMax * (held / total) : 0,
      asking: ENDS_ASKING.test(item.text) ? -BONUS.askingPenalty : 0,
    };
  });
}
