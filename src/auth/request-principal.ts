import { LOCAL_PRINCIPAL, type Principal } from './principal.js';

/**
 * A per-request principal: same rights, own identity, and its own audit record
 * (`requestAudit`, see request-audit.ts). Each request gets a frozen copy, so what one request
 * read and was served is never mixed with another's.
 */
export function bindRequestPrincipal(principal: Principal): Principal {
  return Object.freeze({
    ...principal,
    requestAudit: {
      auditPii: principal !== LOCAL_PRINCIPAL,
      namespacesRead: new Set<string>(),
      piiServed: new Map(),
    },
  });
}
