import { builder } from '../../../kernel/schema/builder.js';
import { WritePayloadRef } from '../../../kernel/schema/write-payload.js';
import { FactInputRef } from './fact-input.js';

builder.mutationFields((t) => ({
  assertFacts: t.field({
    type: WritePayloadRef,
    description:
      'Creates facts or reinforces existing ones (REINFORCED: observation ids appended, confidence raised to the ' +
      'max); conflicting facts are both kept and flagged. Each item answers for itself.',
    args: {
      namespace: t.arg.string({ required: true }),
      facts: t.arg({ type: [FactInputRef], required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.facts.assertFacts(args.namespace, args.facts),
  }),
  supersedeFact: t.field({
    type: WritePayloadRef,
    description:
      'Closes an ACTIVE fact at the new fact’s validFrom (default now), marks it SUPERSEDED and links both; ' +
      'nothing is deleted. An unknown factId is a REJECTED item with code NOT_FOUND.',
    args: {
      namespace: t.arg.string({ required: true }),
      factId: t.arg.string({ required: true }),
      by: t.arg({ type: FactInputRef, required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.facts.supersedeFact(args.namespace, args.factId, args.by),
  }),
  retractFact: t.field({
    type: WritePayloadRef,
    description: 'Marks a fact RETRACTED with the reason; an open validity ends now. Nothing is deleted.',
    args: {
      namespace: t.arg.string({ required: true }),
      factId: t.arg.string({ required: true }),
      reason: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => ctx.services.facts.retractFact(args.namespace, args.factId, args.reason),
  }),
}));
