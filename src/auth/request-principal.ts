import { LOCAL_PRINCIPAL, type Principal } from './principal.js';

/**
 * What one request did with its principal's rights, for the audit: the namespaces it was
 * allowed to read and the personal data it was served unmasked. Each request gets its own
 * principal object (a frozen copy), so this record is found from the principal alone — the
 * services and renderers already hold it and need no extra parameter.
 */
export interface PiiServed {
  namespace: string;
  type: string;
  id: string | null;
  fields: Set<string>;
  categories: Set<string>;
}

export interface RequestRecord {
  /**
   * False in local mode: the audit trail records what tokens were served (nobody else can
   * reach a loopback-only gateway without a token file).
   */
  auditPii: boolean;
  namespacesRead: Set<string>;
  /** Keyed by namespace, type and id: a value served twice in one request is audited once. */
  piiServed: Map<string, PiiServed>;
}

const records = new WeakMap<Principal, RequestRecord>();

/** A per-request principal: same rights, own identity, own record. */
export function bindRequestPrincipal(principal: Principal): Principal {
  const bound = Object.freeze({ ...principal });
  records.set(bound, {
    auditPii: principal !== LOCAL_PRINCIPAL,
    namespacesRead: new Set(),
    piiServed: new Map(),
  });
  return bound;
}

/** The record of a request principal; undefined for principals not bound to a request. */
export function requestRecord(principal: Principal): RequestRecord | undefined {
  return records.get(principal);
}
