/**
 * How well a fact's predicate and other side, or an attribute's name and value, answer a query:
 * the query's content words (the named entity's own name aside) against the field's words,
 * equal after a light stemming, or one a prefix of the other, or in one group of paraphrases
 * ("where is X based" asks for a location, "who leads" for a lead or head). Pure.
 */

const STOP_WORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have how i ' +
    'if in into is it its me my of on or our she he her him his that the their them they this those to ' +
    'us was we were what which who whom whose why will with would you your now currently current today ' +
    'still right tell know please any some there then than about'
  ).split(' '),
);

/** Words that ask for the same thing, by the shapes predicates and attribute names take. */
const PARAPHRASES: readonly (readonly string[])[] = [
  [
    'lead',
    'leads',
    'led',
    'leader',
    'head',
    'heads',
    'manage',
    'manages',
    'manager',
    'run',
    'runs',
    'charge',
    'owner',
    'owns',
    'own',
    'responsible',
    'lead_by',
    'leads_by',
  ],
  [
    'location',
    'where',
    'based',
    'live',
    'lives',
    'living',
    'located',
    'city',
    'town',
    'home',
    'address',
    'lives_in',
    'based_in',
    'reside',
    'resides',
    'country',
    'office',
  ],
  ['provider', 'vendor', 'supplier', 'use', 'uses', 'using', 'used', 'service', 'platform'],
  ['date', 'when', 'day', 'deadline', 'scheduled', 'schedule', 'planned', 'due', 'time'],
  ['email', 'contact', 'phone', 'reach', 'mail'],
  ['status', 'state', 'stage'],
  ['plan', 'tier', 'subscription', 'package'],
  ['price', 'cost', 'pricing', 'fee', 'costs', 'budget'],
  ['team', 'group', 'department', 'squad'],
  ['role', 'title', 'position', 'job'],
  ['assignee', 'assigned', 'oncall', 'on_call', 'pager', 'owner'],
  ['severity', 'priority', 'sev'],
  ['diet', 'eat', 'eats', 'food', 'vegetarian', 'vegan', 'allergy', 'allergic'],
  ['works', 'work', 'employer', 'works_at', 'works_for', 'employed', 'company'],
];

const GROUPS = new Map<string, number[]>();
PARAPHRASES.forEach((group, i) => {
  for (const w of group) GROUPS.set(stem(w), [...(GROUPS.get(stem(w)) ?? []), i]);
});

/** Lower-cased, a plural or verb ending removed from words long enough to keep a stem. */
export function stem(word: string): string {
  const w = word.toLowerCase();
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 4 && w.endsWith('es')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** Words of a field: split on anything not a letter or digit, and on camelCase. */
export function fieldWords(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** The query's content words: no stop words, none of `exclude` (the named entities' names). */
export function contentWords(query: string, exclude: ReadonlySet<string> = new Set()): string[] {
  const words = fieldWords(query.normalize('NFKC'));
  // "where" and "when" are stop words elsewhere, but here they ask for a location or a date.
  return [...new Set(words)].filter(
    (w) => (w === 'where' || w === 'when' || (!STOP_WORDS.has(w) && w.length > 1)) && !exclude.has(w),
  );
}

/** Two words ask for the same thing: one stem, one a prefix of the other, or paraphrases. */
export function wordsMatch(q: string, f: string): boolean {
  const a = stem(q);
  const b = stem(f);
  if (a === b) return true;
  if (a.length >= 4 && b.length >= 4 && (a.startsWith(b) || b.startsWith(a))) return true;
  const ga = GROUPS.get(a);
  const gb = GROUPS.get(b);
  return Boolean(ga && gb && ga.some((g) => gb.includes(g)));
}

/** How many of the query's words one field's words answer. */
export function matchCount(queryWords: readonly string[], field: readonly string[]): number {
  let n = 0;
  for (const q of queryWords) if (field.some((f) => wordsMatch(q, f))) n += 1;
  return n;
}

/**
 * The match of a relation (predicate or attribute name, weighed double: it is what was asked)
 * and its value or other side.
 */
export function relationMatch(queryWords: readonly string[], relation: string, value: string): number {
  return 2 * matchCount(queryWords, fieldWords(relation)) + matchCount(queryWords, fieldWords(value));
}

/**
 * Lower-cased words of the query an entity's title may start or end with: content words of
 * three letters or more, at most `max`, in order.
 */
export function nameWords(query: string, max = 12): string[] {
  // Identifiers keep their inner punctuation ("INC-42", "api.v2"): a title may start with one.
  const identifiers = (query.normalize('NFKC').match(/[\p{L}\p{N}]+(?:[-_./:#][\p{L}\p{N}]+)+/gu) ?? []).map(
    (t) => t.toLowerCase(),
  );
  const words = contentWords(query).filter((w) => w.length >= 3 && w !== 'where' && w !== 'when');
  return [...new Set([...identifiers, ...words])].slice(0, max);
}
