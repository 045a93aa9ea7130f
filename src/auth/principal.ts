import { isVisibilityScope } from '../domain/scopes.js';
import { type MemgateError, forbidden } from '../errors.js';
import type { RequestAudit } from './request-audit.js';

/** Who is asking: which namespaces they may read and write, which visibility scopes they hold. */
export interface Principal {
  id: string;
  read: string[];
  write: string[];
  /**
   * Visibility scopes the principal holds; null means every scope (local mode, or `"*"` in the
   * tokens file). `admin` does not widen scopes.
   */
  scopes: string[] | null;
  pii: boolean;
  admin: boolean;
  /**
   * The audit record of the request this principal was bound to (bindRequestPrincipal); absent
   * for principals not bound to a request (CLI, background work), which audit nothing.
   */
  readonly requestAudit?: RequestAudit;
}

/** Local mode: one full-access principal, only ever bound to loopback. */
export const LOCAL_PRINCIPAL: Principal = {
  id: 'local',
  read: ['*'],
  write: ['*'],
  scopes: null,
  pii: true,
  admin: true,
};

/** `team-*` matches `team-a`; `*` matches everything; no other metacharacters. */
export function globMatches(glob: string, value: string): boolean {
  if (glob === '*') return true;
  const pattern = glob.split('*').map(escapeRegExp).join('.*');
  return new RegExp(`^${pattern}$`).test(value);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function canRead(principal: Principal, namespace: string): boolean {
  return (
    principal.read.some((g) => globMatches(g, namespace)) ||
    principal.write.some((g) => globMatches(g, namespace))
  );
}

export function canWrite(principal: Principal, namespace: string): boolean {
  return principal.write.some((g) => globMatches(g, namespace));
}

/**
 * Checked before any SQL runs, so a namespace the principal may not read answers FORBIDDEN
 * whether or not it exists, in the same time, with the same message.
 */
export function assertCanRead(principal: Principal, namespace: string): void {
  if (!canRead(principal, namespace)) throw forbidden(`You may not read namespace "${namespace}".`);
  principal.requestAudit?.namespacesRead.add(namespace);
}

export function assertCanWrite(principal: Principal, namespace: string): void {
  if (!canWrite(principal, namespace)) throw forbidden(`You may not write namespace "${namespace}".`);
}

/**
 * The visibility scopes (`workspace:`, `principal:`) among `scopes` that the principal does not
 * hold. A write may assign only scopes its principal holds — every scope with `scopes: ["*"]` —
 * so nobody can file rows under a scope they cannot read, or squat keys for others. Relevance
 * scopes (`project:`, `task:`…) restrict nothing and are free.
 */
export function unheldScopes(principal: Principal, scopes: readonly string[] | null | undefined): string[] {
  if (!scopes || principal.scopes === null) return [];
  const held = new Set(principal.scopes);
  return [...new Set(scopes)].filter((s) => isVisibilityScope(s) && !held.has(s));
}

/** The item answer for a write assigning scopes its principal does not hold; null when it may. */
export function scopeAssignmentError(
  principal: Principal,
  scopes: readonly string[] | null | undefined,
): MemgateError | null {
  const unheld = unheldScopes(principal, scopes);
  if (unheld.length === 0) return null;
  const shown = unheld
    .slice(0, 3)
    .map((s) => JSON.stringify(s))
    .join(', ');
  return forbidden(
    `You may not assign ${unheld.length === 1 ? 'scope' : 'scopes'} ${shown}${unheld.length > 3 ? ', …' : ''}: a write may carry only visibility scopes you hold.`,
  );
}
