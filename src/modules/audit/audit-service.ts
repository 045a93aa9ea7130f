import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { badInput, forbidden, parseInput } from '../../errors.js';
import { type AuditRow, appendAudit, listAuditTrail } from '../../kernel/store/audit-store.js';
import { type Page, decodeCursor, encodeCursor, pageWindow, toPage } from '../../kernel/pagination.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { REGISTRY_AUDIT_NAMESPACE } from '../domain-packs/index.js';
import { namespaceSchema } from '../../kernel/validation.js';

const actionSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/, 'an action is a name such as pii_access or purge_entity');

export interface AuditTrailArgs {
  since?: Date | null;
  until?: Date | null;
  actions?: string[] | null;
  first?: number | null;
  after?: string | null;
}

/**
 * The audit log, read side for admins and append side for services. Nothing here (or
 * anywhere in the API) updates or deletes an entry; the database refuses it too.
 */
export class AuditService {
  constructor(private readonly scope: RequestScope) {}

  /**
   * Admins only, and only for namespaces they may read; FORBIDDEN otherwise (checked before
   * any SQL). Actions recorded today: redact_observation, purge_entity, pii_access,
   * domainPack.register (namespace `_system`), namespace.configure, snapshot.reconcile.
   */
  async trail(namespace: string, args: AuditTrailArgs): Promise<Page<AuditRow>> {
    const { principal } = this.scope;
    if (!principal.admin) throw forbidden('The audit trail is for admin principals only.');
    // The shared registry (domain packs) audits under its own namespace, readable by any admin.
    const ns =
      namespace === REGISTRY_AUDIT_NAMESPACE
        ? namespace
        : parseInput(namespaceSchema, namespace, 'namespace');
    if (ns !== REGISTRY_AUDIT_NAMESPACE) assertCanRead(principal, ns);
    const actions = args.actions
      ? parseInput(z.array(actionSchema).max(50, 'at most 50 actions'), args.actions, 'actions')
      : null;
    if (args.since && args.until && args.since >= args.until) {
      throw badInput('since must be before until (the window is [since, until)).');
    }
    const { size } = pageWindow({ first: args.first ?? 50 });
    const beforeId = args.after ? Number(decodeCursor(args.after, 1)[0]) : null;
    if (beforeId !== null && !Number.isSafeInteger(beforeId)) throw badInput('Invalid cursor.');
    const rows = await listAuditTrail(this.scope.db, ns, {
      since: args.since ?? null,
      until: args.until ?? null,
      actions,
      beforeId,
      limit: size + 1,
    });
    return toPage(rows, size, false, (r) => encodeCursor([r.auditId]), beforeId !== null);
  }

  /** Appends one entry as the current principal (deletions, packs, namespace settings…). */
  async record(
    namespace: string,
    entry: { action: string; target: string | null; summary: Record<string, unknown> },
  ): Promise<number> {
    return appendAudit(this.scope.db, namespace, { ...entry, principalId: this.scope.principal.id });
  }
}
