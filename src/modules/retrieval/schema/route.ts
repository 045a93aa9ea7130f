import { LOOKUP_MODES, QUERY_TYPES } from '../router/rules.js';
import type { RouteValue } from '../router/route-value.js';
import { builder } from '../../../kernel/schema/builder.js';
import { AttributeValueRef } from './attribute-value.js';
import { FacetsRef } from './facets.js';
import { GraphPathRef } from '../../graph/schema/index.js';
import { ResolvedEntityRef } from './resolved-entity.js';
import { RouteInputRef } from './route-input.js';
import { TimeWindowRef } from './time-window.js';

export const QueryTypeEnum = builder.enumType('QueryType', {
  description:
    'ENTITY_LOOKUP (an attribute of / everything about an entity), RELATIONSHIP (how two entities connect), ' +
    'TEMPORAL (what happened in a window), TEMPORAL_FACETS (which topics/entities came up in a window: counts), ' +
    'EXPLORATORY (a survey), ASPECT (default), NO_SEARCH (small talk).',
  values: QUERY_TYPES,
});

export const LookupModeEnum = builder.enumType('LookupMode', { values: LOOKUP_MODES });

export const RouteSourceEnum = builder.enumType('RouteSource', {
  description: 'RULES (deterministic, offline) or LLM (a validated refinement of the rules).',
  values: ['RULES', 'LLM'] as const,
});

export const RouteRef = builder.objectRef<RouteValue>('Route').implement({
  description:
    'How a query was routed: its type and the hints extracted from it (and, under AUTO, what the handler found).',
  fields: (t) => ({
    queryType: t.field({ type: QueryTypeEnum, resolve: (r) => r.queryType }),
    lookupMode: t.field({ type: LookupModeEnum, nullable: true, resolve: (r) => r.lookupMode }),
    entityHints: t.exposeStringList('entityHints'),
    resolvedEntities: t.field({ type: [ResolvedEntityRef], resolve: (r) => r.resolvedEntities }),
    attribute: t.string({
      nullable: true,
      description: 'Attribute key asked for.',
      resolve: (r) => r.attribute,
    }),
    timeWindow: t.field({ type: TimeWindowRef, nullable: true, resolve: (r) => r.timeWindow }),
    referenceTime: t.field({ type: 'DateTime', resolve: (r) => r.referenceTime }),
    source: t.field({ type: RouteSourceEnum, resolve: (r) => r.source }),
    fallbackReason: t.string({
      nullable: true,
      description: 'Why the LLM refinement was not used (timeout, invalid output…); null otherwise.',
      resolve: (r) => r.fallbackReason,
    }),
    reason: t.exposeString('reason', { description: 'The rule (or "llm") that decided.' }),
    attributeValue: t.field({
      type: AttributeValueRef,
      nullable: true,
      description: 'ENTITY_LOOKUP in attribute mode: the value found (AUTO only).',
      resolve: (r) => r.attributeValue,
    }),
    paths: t.field({
      type: [GraphPathRef],
      description: 'RELATIONSHIP: paths between the two entities (AUTO only).',
      resolve: (r) => r.paths,
    }),
    facets: t.field({
      type: FacetsRef,
      nullable: true,
      description: 'TEMPORAL_FACETS: the counts of the window (AUTO only).',
      resolve: (r) => r.facets,
    }),
    compactedSessions: t.exposeStringList('compactedSessions', {
      description: 'Sessions whose selected items were replaced by their compact (AUTO only).',
    }),
    notes: t.exposeStringList('notes', {
      description: 'entity_not_resolved, attribute_unknown, no_connecting_path…',
    }),
  }),
});

builder.queryFields((t) => ({
  route: t.field({
    type: RouteRef,
    description: 'How context(strategy: AUTO) would route a query, without running it.',
    args: { input: t.arg({ type: RouteInputRef, required: true }) },
    resolve: (_root, args, ctx) => ctx.services.route.inspect(args.input),
  }),
}));
