/**
 * Default characters per token. 3.0 is deliberately conservative: Cyrillic text tokenises
 * denser than English, and over-estimating only costs a little budget, while under-estimating
 * overflows the caller's prompt.
 */
export const DEFAULT_CHARS_PER_TOKEN = 3.0;

/** Unicode code points in `text` (a surrogate pair is one character, as a reader sees it). */
export function countCodePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** Token estimate used by packing: `ceil(codePoints / charsPerToken)`; empty text costs 0. */
export function estimateTokens(text: string, charsPerToken: number = DEFAULT_CHARS_PER_TOKEN): number {
  if (!Number.isFinite(charsPerToken) || charsPerToken <= 0) {
    throw new RangeError(`charsPerToken must be a positive number, got ${charsPerToken}`);
  }
  return Math.ceil(countCodePoints(text) / charsPerToken);
}
