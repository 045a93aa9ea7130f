/**
 * What one request did with its principal's rights, for the audit: the namespaces it was
 * allowed to read and the personal data it was served unmasked. It travels on the request's own
 * principal (`Principal.requestAudit`, see request-principal.ts), so the services and renderers
 * that already hold the principal fill it in with no extra parameter.
 */
export interface PiiServed {
  namespace: string;
  type: string;
  id: string | null;
  fields: Set<string>;
  categories: Set<string>;
}

export interface RequestAudit {
  /**
   * False in local mode: the audit trail records what tokens were served (nobody else can
   * reach a loopback-only gateway without a token file).
   */
  auditPii: boolean;
  namespacesRead: Set<string>;
  /** Keyed by namespace, type and id: a value served twice in one request is audited once. */
  piiServed: Map<string, PiiServed>;
}
