import type { TypedContextValue } from '../typed-context-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { DirectionEnum } from '../../../kernel/schema/enums.js';
import { FactRef } from '../../../kernel/schema/fact.js';
import { SourceRefRef } from '../../documents/schema/index.js';

const TypedAnchorInputRef = builder.inputType('TypedAnchorInput', {
  fields: (t) => ({
    kind: t.string({ required: true }),
    value: t.string({ required: true }),
  }),
});

const TraverseStepInputRef = builder.inputType('TraverseStepInput', {
  fields: (t) => ({
    relation: t.string({ required: true }),
    direction: t.field({ type: DirectionEnum, defaultValue: 'OUT' }),
    depth: t.int({ defaultValue: 1, description: 'Breadth levels, 1..5.' }),
    limit: t.int({ defaultValue: 50, description: 'New entities this step may add, 1..200.' }),
    from: t.string({
      defaultValue: 'anchors',
      description: '"anchors" or "previous" (the previous step\'s new entities).',
    }),
  }),
});

const TypedContextInputRef = builder.inputType('TypedContextInput', {
  fields: (t) => ({
    namespaces: t.stringList({ required: true }),
    anchors: t.field({ type: [TypedAnchorInputRef], required: true }),
    traverse: t.field({ type: [TraverseStepInputRef], required: true }),
    asOf: t.field({
      type: 'DateTime',
      description: 'Facts valid and attributes in force at this time (default now).',
    }),
    allowSemantic: t.boolean({
      defaultValue: false,
      description: 'Resolve otherwise unresolved anchors by vector search (marked INFERRED).',
    }),
  }),
});

export const TypedContextRef = builder.objectRef<TypedContextValue>('TypedContext').implement({
  description: 'A deterministic traversal from anchors through domain-pack relations as of a time.',
  fields: (t) => ({
    anchors: t.field({
      type: 'JSON',
      description:
        'Per anchor: resolved, resolvedBy (exact | alias | pattern | semantic) and matches [{namespace, key, kind, resolvedBy, evidence, detail}].',
      resolve: (v) => v.anchors,
    }),
    unresolved: t.exposeStringList('unresolved', { description: 'Anchors nothing matched, as kind:value.' }),
    sections: t.field({
      type: 'JSON',
      description:
        'Entities grouped by kind: [{kind, entities: [{namespace, key, kind, title, attributes (as of asOf), stale, anchor, step, depth}]}].',
      resolve: (v) => v.sections,
    }),
    facts: t.field({
      type: [FactRef],
      description: 'The facts walked, in walk order.',
      resolve: (v) => v.facts,
    }),
    sources: t.field({ type: [SourceRefRef], resolve: (v) => v.sources }),
    used: t.field({
      type: 'JSON',
      description:
        'Everything the answer rests on: entities, facts and source snapshots, as namespace-qualified ids.',
      resolve: (v) => v.used,
    }),
    warnings: t.exposeStringList('warnings'),
    traceId: t.exposeString('traceId'),
  }),
});

builder.queryFields((t) => ({
  typedContext: t.field({
    type: TypedContextRef,
    description: 'Deterministic traversal from typed anchors through domain-pack relations as of a time.',
    args: { input: t.arg({ type: TypedContextInputRef, required: true }) },
    resolve: (_root, args, ctx) => ctx.services.typedContext.typedContext(args.input),
  }),
}));
