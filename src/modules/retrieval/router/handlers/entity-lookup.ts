import { fieldWords, wordsMatch } from '../../compiler/state-match.js';
import type { EntityMatch } from '../../store/route-store.js';
import {
  type AttributeValue,
  type HandlerContext,
  type HandlerResult,
  emptyResult,
  withAnchors,
} from './types.js';

const norm = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, '');

/** The attribute named `wanted` in `attributes`: exact (case/separator-insensitive), then containment. */
export function findAttribute(attributes: Record<string, unknown>, wanted: string): [string, unknown] | null {
  const w = norm(wanted);
  const entries = Object.entries(attributes).filter(([, v]) => v !== null && v !== undefined && v !== '');
  const exact = entries.find(([k]) => norm(k) === w);
  if (exact) return exact;
  const contained = entries
    .filter(([k]) => norm(k).includes(w) || (norm(k).length >= 3 && w.includes(norm(k))))
    .sort(([a], [b]) => a.length - b.length || a.localeCompare(b));
  if (contained[0]) return contained[0];
  // Stored under another name for the same thing ("city" for a location, "head" for a lead).
  const asked = fieldWords(wanted);
  return entries.find(([k]) => fieldWords(k).some((f) => asked.some((a) => wordsMatch(a, f)))) ?? null;
}

/**
 * ENTITY_LOOKUP. Attribute mode: the attribute of the resolved entity as of `asOf`, with the
 * attribute version's provenance, and a GRAPH pack anchored on the entity (its facts and
 * neighbours, no conversation text). Broad mode — or an unknown attribute, or an entity that
 * does not resolve — is the hybrid pack anchored on the entity: its episodes and facts.
 */
export async function handleEntityLookup(ctx: HandlerContext): Promise<HandlerResult> {
  const entity: EntityMatch | undefined = ctx.resolved[0];
  const notes: string[] = [];
  if (!entity) notes.push('entity_not_resolved');
  if (entity && ctx.decision.lookupMode === 'ATTRIBUTE' && ctx.decision.attribute) {
    const version = await ctx.attributesAt(entity, ctx.asOf);
    const attributes = version ? version.attributes : ctx.asOf ? {} : entity.attributes;
    const found = findAttribute(attributes ?? {}, ctx.decision.attribute);
    if (found) {
      const attribute: AttributeValue = {
        namespace: entity.namespace,
        entityKey: entity.key,
        entityTitle: entity.title,
        name: found[0],
        value: found[1],
        validFrom: version?.validFrom ?? null,
        validTo: version?.validTo ?? null,
        observationId: version?.observationId ?? null,
      };
      const pack = await ctx.compile({
        ...withAnchors(ctx.base, [entity.key]),
        strategy: 'GRAPH',
        k: Math.min(ctx.base.k, 4),
      });
      return { ...emptyResult(pack), lookupMode: 'ATTRIBUTE', attribute, notes };
    }
    notes.push('attribute_unknown');
  }
  const pack = await ctx.compile(entity ? withAnchors(ctx.base, [entity.key]) : ctx.base);
  return { ...emptyResult(pack), lookupMode: 'BROAD', notes };
}
