/**
 * Text-search languages. A namespace searches in one PostgreSQL text-search configuration
 * (`russian`, `english`, `simple`, … any row of pg_ts_config) or in `auto`: each chunk's
 * language is detected offline and its configuration stored with the chunk.
 */

/** The value a namespace stores: a configuration name, or `auto`. */
export const AUTO = 'auto';

/** Configuration names as pg_ts_config spells them (unquoted identifiers, optionally schema-qualified). */
const CONFIG_NAME = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$/;

/** Lower-cases and checks the syntax of a setting; null when it cannot name a configuration. */
export function normaliseTextSearch(value: string): string | null {
  const v = value.trim().toLowerCase();
  return v === AUTO || CONFIG_NAME.test(v) ? v : null;
}

/**
 * ISO 639-1 code → the Snowball configuration PostgreSQL ships for it. Languages without a
 * stemmer of their own borrow the closest one (Ukrainian and Belarusian text is stemmed far
 * better by `russian` than by `simple`).
 */
const CONFIG_OF_LANGUAGE: Readonly<Record<string, string>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  uk: 'russian',
  be: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

export function configOfLanguage(language: string): string | null {
  return CONFIG_OF_LANGUAGE[language] ?? null;
}

/** Latin-script languages the n-gram detector may answer (those with a configuration). */
export const LATIN_LANGUAGES: readonly string[] = [
  'ca',
  'da',
  'nl',
  'en',
  'eu',
  'fi',
  'fr',
  'de',
  'hu',
  'id',
  'ga',
  'it',
  'lt',
  'no',
  'pt',
  'ro',
  'es',
  'sv',
  'tr',
];

type Script = 'latin' | 'cyrillic' | 'greek' | 'armenian' | 'arabic' | 'hebrew' | 'devanagari' | 'tamil';

const SCRIPTS: ReadonlyArray<[Script, RegExp]> = [
  ['latin', /\p{Script=Latin}/u],
  ['cyrillic', /\p{Script=Cyrillic}/u],
  ['greek', /\p{Script=Greek}/u],
  ['armenian', /\p{Script=Armenian}/u],
  ['arabic', /\p{Script=Arabic}/u],
  ['hebrew', /\p{Script=Hebrew}/u],
  ['devanagari', /\p{Script=Devanagari}/u],
  ['tamil', /\p{Script=Tamil}/u],
];

/** Letters only Serbian Cyrillic uses; without them Cyrillic text is taken for Russian. */
const SERBIAN_ONLY = /[ђјљњћџЂЈЉЊЋЏ]/u;

/** Below this many letters an n-gram guess is noise: the script decides, or the fallback. */
export const MIN_DETECTION_LETTERS = 12;

export interface ScriptCount {
  script: Script | null;
  letters: number;
}

/** The script most letters are written in (identifiers and numbers do not count). */
export function dominantScript(text: string): ScriptCount {
  const counts = new Map<Script, number>();
  let letters = 0;
  for (const ch of text) {
    if (!/\p{L}/u.test(ch)) continue;
    letters++;
    for (const [script, re] of SCRIPTS) {
      if (re.test(ch)) {
        counts.set(script, (counts.get(script) ?? 0) + 1);
        break;
      }
    }
  }
  let best: Script | null = null;
  for (const [script, n] of counts) if (best === null || n > counts.get(best)!) best = script;
  return { script: best, letters };
}

/** A Latin-script n-gram detector: ISO 639-1 code, or null when unsure. */
export type LatinDetector = (text: string) => string | null;

/**
 * The configuration for one chunk's text in an `auto` namespace. Non-Latin scripts are decided
 * by the script alone (each has one configuration); Latin text goes to the n-gram detector
 * when long enough. Anything unsure, or a configuration the database lacks, gets `fallback`.
 */
export function detectTextSearchConfig(
  text: string,
  options: { available: ReadonlySet<string>; fallback: string; detectLatin: LatinDetector },
): string {
  const { script, letters } = dominantScript(text);
  const pick = (config: string | null) =>
    config !== null && options.available.has(config) ? config : options.fallback;
  switch (script) {
    case null:
      return options.fallback;
    case 'cyrillic':
      return pick(SERBIAN_ONLY.test(text) ? 'serbian' : 'russian');
    case 'greek':
      return pick('greek');
    case 'armenian':
      return pick('armenian');
    case 'arabic':
      return pick('arabic');
    case 'hebrew':
      return pick('yiddish');
    case 'devanagari':
      return pick('hindi');
    case 'tamil':
      return pick('tamil');
    case 'latin': {
      if (letters < MIN_DETECTION_LETTERS) return options.fallback;
      const language = options.detectLatin(text);
      return pick(language === null ? null : configOfLanguage(language));
    }
  }
}
