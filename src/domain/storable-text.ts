/**
 * Text PostgreSQL cannot store: `text` and `jsonb` refuse NUL, and a lone UTF-16 surrogate has
 * no UTF-8 form. Checked at the edge (arguments, variables, decoded ids) so no such value ever
 * reaches SQL as an "invalid byte sequence" error.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `value` cannot be stored, or null when it can. */
export function unstorableText(value: string): string | null {
  if (value.includes('\u0000')) return 'Text may not contain the NUL character (U+0000).';
  if (LONE_SURROGATE.test(value)) return 'Text must be valid Unicode (a lone surrogate was found).';
  return null;
}
