import { nsKey } from '../loaders.js';
import type { FactRow } from '../store/fact-store.js';
import type { EntityRow } from '../store/entity-store.js';
import { builder } from './builder.js';
import { EntityRef } from './entity.js';
import { EvidenceEnum, FactStatusEnum } from './enums.js';
import { loadNodes } from './node-loading.js';
import { ObservationRef } from './observation.js';

export const FactRef = builder.objectRef<FactRow>('Fact');

builder.node(FactRef, {
  description: 'An edge: subject —predicate→ object, true during [validFrom, validTo).',
  id: { resolve: (f) => JSON.stringify([f.namespace, f.factId]) },
  loadMany: (ids, ctx) => loadNodes(ids, ctx, (k) => ctx.loaders.fact.load(k)),
  fields: (t) => ({
    factId: t.exposeString('factId'),
    namespace: t.exposeString('namespace'),
    subject: t.field({
      type: EntityRef,
      resolve: (f, _a, ctx) => endpoint(f, 'subject', ctx.services.graph.factEndpoint(f, 'subject')),
    }),
    predicate: t.exposeString('predicate'),
    object: t.field({
      type: EntityRef,
      resolve: (f, _a, ctx) => endpoint(f, 'object', ctx.services.graph.factEndpoint(f, 'object')),
    }),
    validFrom: t.field({ type: 'DateTime', resolve: (f) => f.validFrom }),
    validTo: t.field({ type: 'DateTime', nullable: true, resolve: (f) => f.validTo }),
    recordedAt: t.field({ type: 'DateTime', resolve: (f) => f.recordedAt }),
    evidence: t.field({ type: EvidenceEnum, resolve: (f) => f.evidence }),
    confidence: t.exposeFloat('confidence'),
    status: t.field({ type: FactStatusEnum, resolve: (f) => f.status }),
    conflict: t.exposeBoolean('conflict'),
    conflictsWith: t.field({
      type: [FactRef],
      resolve: async (f, _a, ctx) =>
        (await ctx.loaders.fact.loadMany(f.conflictsWith.map((id) => nsKey(f.namespace, id)))).filter(isRow),
    }),
    supersedes: t.field({
      type: FactRef,
      nullable: true,
      resolve: (f, _a, ctx) =>
        f.supersedes ? ctx.loaders.fact.load(nsKey(f.namespace, f.supersedes)) : null,
    }),
    supersededBy: t.field({
      type: FactRef,
      nullable: true,
      resolve: (f, _a, ctx) =>
        f.supersededBy ? ctx.loaders.fact.load(nsKey(f.namespace, f.supersededBy)) : null,
    }),
    observations: t.field({
      type: [ObservationRef],
      resolve: async (f, _a, ctx) =>
        (await ctx.loaders.observation.loadMany(f.observationIds.map((id) => nsKey(f.namespace, id)))).filter(
          isRow,
        ),
    }),
    sourcePath: t.string({ nullable: true, resolve: (f) => f.sourcePath }),
    scopes: t.exposeStringList('scopes'),
    attributes: t.field({ type: 'JSON', resolve: (f) => f.attributes }),
    statusReason: t.string({ nullable: true, resolve: (f) => f.statusReason }),
  }),
});

/** The endpoint row or its placeholder, synchronously when the row is already at hand. */
function endpoint(
  f: FactRow,
  side: 'subject' | 'object',
  found: EntityRow | null | Promise<EntityRow | null>,
): EntityRow | Promise<EntityRow> {
  return found instanceof Promise
    ? found.then((row) => placeholderIfMissing(f, f[side], row))
    : placeholderIfMissing(f, f[side], found);
}

/**
 * An endpoint the caller may not see (visibility scopes) is shown as an opaque placeholder,
 * never as the hidden entity; facts always have both endpoints in the database.
 */
function placeholderIfMissing<T>(f: FactRow, key: string, row: T | null): T | EntityRow {
  if (row) return row;
  const now = f.recordedAt;
  return {
    namespace: f.namespace,
    key,
    kind: 'entity',
    title: key,
    attributes: {},
    scopes: [],
    visibility: [],
    sourcePath: null,
    confidence: null,
    origin: 'AGENT',
    placeholder: true,
    stale: false,
    aliases: [],
    pii: false,
    piiCategories: [],
    lastSeen: null,
    createdAt: now,
    updatedAt: now,
  };
}

export function isRow<T>(value: T | null | Error): value is T {
  return value !== null && !(value instanceof Error);
}
