import { builder } from '../../../kernel/schema/builder.js';
import { FactRef } from '../../../kernel/schema/fact.js';

builder.queryFields((t) => ({
  fact: t.field({
    type: FactRef,
    nullable: true,
    description: 'One fact by id, whatever its status; null when absent or not visible.',
    args: { namespace: t.arg.string({ required: true }), factId: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.graph.fact(args.namespace, args.factId),
  }),
}));
