import { badInput } from '../../../errors.js';
import { builder } from '../../../kernel/schema/builder.js';

// Domain packs are versioned JSON documents: the pack goes in and comes out as JSON (its
// shape is the zod model in src/domain/domain-pack.ts), so these root fields return JSON.

builder.queryFields((t) => ({
  domainPacks: t.field({
    type: 'JSON',
    description:
      'Registered domain packs (every version, or the versions of one name): name, version, ref, bodyHash, kinds, relations and the normalised body.',
    args: { name: t.arg.string() },
    resolve: (_root, args, ctx) => ctx.services.domainPacks.list(args.name ?? null),
  }),
  namespaceSettings: t.field({
    type: 'JSON',
    description: 'The packs a namespace has enabled, strict mode, and the kinds and relations they declare.',
    args: { namespace: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.domainPacks.settings(args.namespace),
  }),
}));

builder.mutationFields((t) => ({
  registerDomainPack: t.field({
    type: 'JSON',
    description:
      'Registers a versioned domain pack (admins). The same name and version with another body is a CONFLICT; with the same body it is a no-op (status UNCHANGED). Id patterns are checked for catastrophic backtracking.',
    args: { pack: t.arg({ type: 'JSON', required: true }) },
    resolve: (_root, args, ctx) => ctx.services.domainPacks.register(args.pack),
  }),
  setPredicateCardinality: t.field({
    type: 'JSON',
    description:
      'How many objects a predicate holds at a time for one subject in a namespace: ONE (a person lives in one city) ' +
      'flags overlapping values written without a supersession as conflict: true (both served, marked, never both ' +
      'silently "now"); MANY (the default) lets them coexist. A domain pack declares the same with cardinality "one". ' +
      'Answers { status, namespace, predicate, cardinality, singleValuedPredicates }.',
    args: {
      namespace: t.arg.string({ required: true }),
      predicate: t.arg.string({ required: true }),
      cardinality: t.arg.string({ required: true, description: 'ONE or MANY.' }),
    },
    resolve: (_root, args, ctx) => {
      const cardinality = args.cardinality.toUpperCase();
      if (cardinality !== 'ONE' && cardinality !== 'MANY') throw badInput('cardinality must be ONE or MANY');
      return ctx.services.domainPacks.setPredicateCardinality(args.namespace, args.predicate, cardinality);
    },
  }),
  configureNamespace: t.field({
    type: 'JSON',
    description:
      'Enables packs (`name@version`) for a namespace and sets strict mode: in strict mode writes outside the packs are REJECTED with SCHEMA_VIOLATION.',
    args: {
      namespace: t.arg.string({ required: true }),
      packs: t.arg.stringList({ required: true }),
      strict: t.arg.boolean({ required: true }),
    },
    resolve: (_root, args, ctx) =>
      ctx.services.domainPacks.configure(args.namespace, args.packs, args.strict),
  }),
}));
