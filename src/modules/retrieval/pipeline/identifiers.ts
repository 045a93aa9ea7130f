/**
 * Identifier-like tokens of a query: what embeddings blur and stemming mangles, and what a
 * user who types one means literally — error codes, SHAs, UUIDs, file names and paths,
 * snake_case and CamelCase symbols, keys such as `person:alice`.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^(?=.*\d)(?=.*[a-f])[0-9a-f]{7,64}$/i;
// Letters and digits mixed (E1234, gpt4, v2, 0x1f, HTTP-504, ERR_42); not plain numbers.
const ALNUM_MIX = /^(?=.*\p{L})(?=.*\p{N})[\p{L}\p{N}][\p{L}\p{N}._:/-]*$/u;
const SNAKE = /^[\p{L}\p{N}]+(?:_[\p{L}\p{N}]+)+$/u;
// A lower-to-upper switch inside a word: parseConfig, getHTTPResponse, iPhone.
const CAMEL = /^\p{L}[\p{L}\p{N}]*\p{Ll}\p{Lu}[\p{L}\p{N}]*$/u;
// file.ext, dir/file.ext, a.b.c module paths; the last segment holds a letter.
const DOTTED = /^[\p{L}\p{N}_-]+(?:[./][\p{L}\p{N}_-]+)*\.(?=[\p{L}\p{N}]*\p{L})[\p{L}\p{N}]{1,12}$/u;
const PATH = /^\.{0,2}\/?[\p{L}\p{N}._-]+(?:\/[\p{L}\p{N}._-]+)+\/?$/u;
// type:id keys (person:alice, workspace:w1); not clock times (10:30).
const KEY = /^[a-z][a-z0-9_-]{0,31}:[\p{L}\p{N}][\p{L}\p{N}._:/-]*$/u;

// Quantities and ordinals mix digits and letters but name nothing: 1st, 90s, 10am, 5km, 2x.
const QUANTITY = /^\d+(?:[.,]\d+)?(?:st|nd|rd|th|s|am|pm|h|hr|hrs|min|m|k|kg|km|g|mb|gb|tb|ms|x|yo|y)$/i;

// Abbreviations are dotted too: e.g, i.e., U.S.A.
const ABBREVIATION = /^(?:\p{L}\.)+\p{L}?\.?$/u;

const MIN_LENGTH = 3;
const MAX_LENGTH = 200;

/** True when `token` (already stripped of surrounding punctuation) looks like an identifier. */
export function isIdentifierLike(token: string): boolean {
  if (
    token.length < MIN_LENGTH ||
    token.length > MAX_LENGTH ||
    QUANTITY.test(token) ||
    ABBREVIATION.test(token)
  ) {
    return false;
  }
  return (
    UUID.test(token) ||
    HEX.test(token) ||
    ALNUM_MIX.test(token) ||
    SNAKE.test(token) ||
    CAMEL.test(token) ||
    DOTTED.test(token) ||
    PATH.test(token) ||
    KEY.test(token)
  );
}

/**
 * The distinct identifier-like tokens of `query` in order of appearance (compared without
 * case), at most `max`. Quotes, brackets and sentence punctuation around a token are not
 * part of it.
 */
export function extractIdentifiers(query: string, max = 8): string[] {
  const seen = new Set<string>();
  const found: string[] = [];
  for (const raw of query.normalize('NFKC').split(/[\s,;()[\]{}<>"'`«»“”‘’|!?=+*&^%$#@~]+/u)) {
    const token = raw.replace(/^[.:/-]+|[.:/-]+$/g, '');
    if (!isIdentifierLike(token)) continue;
    const folded = token.toLowerCase();
    if (seen.has(folded)) continue;
    seen.add(folded);
    found.push(token);
    if (found.length >= max) break;
  }
  return found;
}
