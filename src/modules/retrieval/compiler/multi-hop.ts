/**
 * Entity detection by rule for multi-hop expansion (no NER, no model): capitalised words of
 * the packed texts, ranked by frequency, without common sentence starters and without words
 * the query already holds — those were searched for already.
 */

// A capital then at least two lower-case letters, Latin (with accents) or Cyrillic.
const CAPITALISED = /(?<![\p{L}\p{N}_])[A-ZÀ-ÖØ-ÝА-ЯЁ][a-zß-öø-ÿа-яё]{2,}(?![\p{L}\p{N}_])/gu;

/** Words that start sentences or label our own rendering, in the languages of the seeds. */
const STOPWORDS = new Set(
  [
    // English
    'the',
    'and',
    'but',
    'for',
    'with',
    'this',
    'that',
    'these',
    'those',
    'then',
    'there',
    'they',
    'their',
    'what',
    'when',
    'where',
    'which',
    'who',
    'why',
    'how',
    'she',
    'her',
    'his',
    'him',
    'you',
    'your',
    'our',
    'its',
    'was',
    'were',
    'are',
    'has',
    'have',
    'had',
    'not',
    'yes',
    'also',
    'after',
    'before',
    'from',
    'into',
    'about',
    'just',
    'some',
    'any',
    'all',
    'one',
    'two',
    'did',
    'does',
    'can',
    'could',
    'would',
    'should',
    'will',
    'may',
    'might',
    'maybe',
    'well',
    'yeah',
    'thanks',
    'thank',
    'hey',
    'hi',
    'hello',
    'wow',
    'great',
    'sure',
    'okay',
    'today',
    'yesterday',
    'tomorrow',
    'monday',
    'tuesday',
    'wednesday',
    'thursday',
    'friday',
    'saturday',
    'sunday',
    'january',
    'february',
    'march',
    'april',
    'june',
    'july',
    'august',
    'september',
    'october',
    'november',
    'december',
    'valid',
    'now',
    'conflict',
    'current',
    'state',
    'episode',
    'document',
    'observation',
    'fact',
    'entity',
    'untrusted',
    'source',
    'end',
    // French
    'les',
    'des',
    'une',
    'pour',
    'avec',
    'dans',
    'sur',
    'par',
    'est',
    'sont',
    'pas',
    'mais',
    'aussi',
    'puis',
    'donc',
    'cette',
    'ces',
    'nous',
    'vous',
    'ils',
    'elle',
    'elles',
    // Russian
    'это',
    'как',
    'что',
    'для',
    'при',
    'его',
    'она',
    'они',
    'так',
    'там',
    'тут',
    'где',
    'когда',
    'если',
    'потом',
    'также',
    'или',
    'все',
    'уже',
    'еще',
    'ещё',
  ].map((w) => w.toLowerCase()),
);

/**
 * Russian names inflect («Игорь», «Игоря», «Игорем»): a Cyrillic word of the text is the
 * query's when both share all but their last three letters (at least four).
 */
function sameInflectedName(word: string, queryWords: ReadonlySet<string>): boolean {
  if (!/^[а-яё]/u.test(word)) return false;
  for (const q of queryWords) {
    const stem = Math.max(4, Math.min(word.length, q.length) - 3);
    if (q.length >= 4 && word.slice(0, stem) === q.slice(0, stem)) return true;
  }
  return false;
}

/**
 * The `max` most frequent capitalised words of `texts` that are not stopwords and do not
 * occur in `query` (compared without case). Ties break alphabetically.
 */
export function detectEntityNames(texts: readonly string[], query: string, max: number): string[] {
  const inQuery = new Set(
    query
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean),
  );
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const match of text.matchAll(CAPITALISED)) {
      const word = match[0];
      const folded = word.toLowerCase();
      if (STOPWORDS.has(folded) || inQuery.has(folded) || sameInflectedName(folded, inQuery)) continue;
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, Math.max(0, max))
    .map(([word]) => word);
}
