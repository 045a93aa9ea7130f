/**
 * Scope labels (`type:id`). Two families: visibility scopes (`workspace:…`, `principal:…`)
 * restrict who may see an item inside a namespace; every other type (`project:`, `task:`…)
 * only affects ranking.
 */

export interface Scope {
  type: string;
  id: string;
}

export const VISIBILITY_SCOPE_TYPES: readonly string[] = ['workspace', 'principal'];

/** Longest accepted label, so a scope stays an index-friendly key. */
export const MAX_SCOPE_LENGTH = 256;

// type: lower-case identifier; id: anything visible without whitespace (ids may hold `:` or `*`).
const SCOPE = /^([a-z][a-z0-9_.-]{0,63}):([^\s\p{Cc}]+)$/u;

/** Parses `type:id` (split at the first colon); null when the label is malformed. */
export function parseScope(label: string): Scope | null {
  if (label.length > MAX_SCOPE_LENGTH) return null;
  const m = SCOPE.exec(label);
  return m ? { type: m[1]!, id: m[2]! } : null;
}

export function isValidScope(label: string): boolean {
  return parseScope(label) !== null;
}

/** The `type` part of a valid label (`project:alpha` → `project`), null when malformed. */
export function scopeKind(label: string): string | null {
  return parseScope(label)?.type ?? null;
}

/** True for `workspace:*` and `principal:*` labels, the ones that restrict visibility. */
export function isVisibilityScope(label: string): boolean {
  const kind = scopeKind(label);
  return kind !== null && VISIBILITY_SCOPE_TYPES.includes(kind);
}

/**
 * An item is visible when it carries no visibility scope, or when one of its visibility
 * scopes is among the principal's allowed scopes. Relevance scopes never hide anything.
 */
export function isVisibleTo(itemScopes: readonly string[], allowedScopes: readonly string[]): boolean {
  const restricting = itemScopes.filter(isVisibilityScope);
  if (restricting.length === 0) return true;
  const allowed = new Set(allowedScopes);
  return restricting.some((scope) => allowed.has(scope));
}
