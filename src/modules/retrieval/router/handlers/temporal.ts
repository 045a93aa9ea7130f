import {
  type HandlerContext,
  type HandlerResult,
  emptyResult,
  noContentRequest,
  withAnchors,
} from './types.js';

/** TEMPORAL: items inside the window, ranked by the hybrid query channels. */
export async function handleTemporal(ctx: HandlerContext): Promise<HandlerResult> {
  const window = ctx.decision.timeWindow;
  const request = withAnchors(
    ctx.base,
    ctx.resolved.map((e) => e.key),
  );
  const pack = await ctx.compile(
    window ? { ...request, window: { since: window.since, until: window.until } } : request,
  );
  return emptyResult(pack);
}

/**
 * TEMPORAL_FACETS: counts only — topics, entities, predicates of the window in each namespace,
 * read concurrently; the pack reads no content (only the caller's CURRENT state, if any).
 */
export async function handleTemporalFacets(ctx: HandlerContext): Promise<HandlerResult> {
  const window = ctx.decision.timeWindow;
  const [pack, ...perNamespace] = await Promise.all([
    ctx.compile(noContentRequest(ctx.base)),
    ...ctx.base.namespaces.map((ns) => ctx.facets(ns, window)),
  ]);
  const merge = (
    pick: (f: (typeof perNamespace)[number]) => { key: string; label: string; count: number }[],
  ) => {
    const byKey = new Map<string, { key: string; label: string; count: number }>();
    for (const f of perNamespace) {
      for (const c of pick(f)) {
        const seen = byKey.get(c.key);
        byKey.set(c.key, seen ? { ...seen, count: seen.count + c.count } : { ...c });
      }
    }
    return [...byKey.values()].sort((x, y) => y.count - x.count || x.key.localeCompare(y.key));
  };
  return {
    ...emptyResult(pack),
    facets: {
      topics: merge((f) => f.topics),
      entities: merge((f) => f.entities),
      predicates: merge((f) => f.predicates),
    },
  };
}
