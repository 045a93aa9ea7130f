/**
 * Every run of whitespace as one space, as `text.replace(/\s+/g, ' ')` gives, but a lone space
 * is no match: ordinary prose (one space between words) is scanned, not rebuilt match by match,
 * which made the plain replace the most expensive step of rendering and deduplicating items.
 */
const NOT_A_LONE_SPACE = / \s+|[^\S ]\s*/g;

export function collapseWhitespace(text: string): string {
  return text.replace(NOT_A_LONE_SPACE, ' ');
}
