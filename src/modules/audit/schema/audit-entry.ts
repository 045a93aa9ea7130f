import type { AuditRow } from '../../../kernel/store/audit-store.js';
import { builder } from '../../../kernel/schema/builder.js';

export const AuditEntryRef = builder.objectRef<AuditRow>('AuditEntry');

AuditEntryRef.implement({
  description:
    'One append-only audit record: who did what, when, to which target, with a summary of the before-state.',
  fields: (t) => ({
    id: t.id({
      description: 'Position in the namespace log (increasing).',
      resolve: (a) => String(a.auditId),
    }),
    namespace: t.exposeString('namespace'),
    at: t.field({ type: 'DateTime', resolve: (a) => a.at }),
    principalId: t.exposeString('principalId'),
    action: t.exposeString('action'),
    target: t.string({ nullable: true, resolve: (a) => a.target }),
    summary: t.field({ type: 'JSON', resolve: (a) => a.summary }),
  }),
});

export const AuditEntryConnectionRef = builder.connectionObject(
  {
    type: AuditEntryRef,
    name: 'AuditEntryConnection',
    fields: (t) => ({ totalCount: t.int({ nullable: true, resolve: () => null }) }),
  },
  { name: 'AuditEntryEdge' },
);

builder.queryFields((t) => ({
  auditTrail: t.field({
    type: AuditEntryConnectionRef,
    description:
      'The audit log of a namespace, newest first, within [since, until). Admin principals only (FORBIDDEN otherwise).',
    args: {
      namespace: t.arg.string({ required: true }),
      since: t.arg({ type: 'DateTime' }),
      until: t.arg({ type: 'DateTime' }),
      actions: t.arg.stringList(),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.audit.trail(args.namespace, {
        since: args.since,
        until: args.until,
        actions: args.actions,
        first: args.first,
        after: args.after,
      }),
  }),
}));
