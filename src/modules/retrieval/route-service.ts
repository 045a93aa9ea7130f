import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import type { CompiledPack } from './compiler/compile.js';
import type { CompileRequest, ContextPackValue } from './compiler/pack-types.js';
import { type TraceDraft, withReplacements } from './compiler/trace.js';
import { parseInput } from '../../errors.js';
import { parseGlobalId } from '../../global-id.js';
import { llmFor } from '../../providers/llm.js';
import { HANDLERS, type HandlerContext } from './router/handlers/index.js';
import { DEFAULT_ROUTER_TIMEOUT_MS, refineRoute } from './router/refine.js';
import type { FacetsValue, RoutedPack, RouteValue } from './router/route-value.js';
import { type RouteDecision, routeByRules } from './router/rules.js';
import type { TimeWindow } from './router/time-window.js';
import { entityFacets, predicateFacets, topicFacets } from './store/facets-store.js';
import { type FactRow, findFactsByIds } from '../../kernel/store/fact-store.js';
import {
  type EntityMatch,
  attributeVersionAt,
  candidateEntityNames,
  invalidatedFactsOf,
  resolveEntityHints,
} from './store/route-store.js';
import { GraphService } from '../graph/index.js';
import { compactSessions } from './session-compaction.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { namespaceSchema } from '../../kernel/validation.js';

export const FACET_LIMIT = 50;
export const INVALIDATED_LIMIT = 20;
const MAX_QUERY_CHARS = 32_768;

export type { RoutedPack } from './router/route-value.js';

const routeInputSchema = z.object({
  namespaces: z.array(namespaceSchema).min(1, 'at least one namespace').max(10, 'at most 10 namespaces'),
  query: z.string().max(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`),
  referenceTime: z.date().nullish(),
});

const facetsArgsSchema = z
  .object({ namespace: namespaceSchema, since: z.date().nullish(), until: z.date().nullish() })
  .refine((a) => !a.since || !a.until || a.since < a.until, { message: 'since must be before until' });

/**
 * Intent routing: classify the query (rules, refined by the LLM when one is configured),
 * resolve its entity hints, run the route's handler, then list the facts about the entities
 * involved that no longer hold ("invalidated facts alongside").
 */
export class RouteService {
  constructor(private readonly scope: RequestScope) {}

  /** `route(input)`: the decision and the resolved entities, without running a handler. */
  async inspect(raw: {
    namespaces: string[];
    query: string;
    referenceTime?: Date | null;
  }): Promise<RouteValue> {
    const input = parseInput(routeInputSchema, raw, 'route input');
    const namespaces = [...new Set(input.namespaces)];
    for (const ns of namespaces) assertCanRead(this.scope.principal, ns);
    const { route } = await this.decide(namespaces, input.query, input.referenceTime ?? null);
    return route;
  }

  async facets(raw: { namespace: string; since?: Date | null; until?: Date | null }): Promise<FacetsValue> {
    const a = parseInput(facetsArgsSchema, raw, 'facets arguments');
    assertCanRead(this.scope.principal, a.namespace);
    return this.facetsOf(a.namespace, a.since ?? null, a.until ?? null);
  }

  /**
   * `context(strategy: AUTO)`: `base` is the caller's request as a HYBRID compilation (access
   * already checked). The handler compiles what its route needs; the pack is then compacted,
   * and only then is its trace written (`serve`), from the pack as served.
   */
  async compileAuto(
    base: CompileRequest,
    compiler: {
      compile(request: CompileRequest): Promise<CompiledPack>;
      serve(trace: TraceDraft, pack: ContextPackValue): Promise<ContextPackValue>;
    },
  ): Promise<RoutedPack> {
    const { route, decision, resolved } = await this.decide(base.namespaces, base.query, base.asOf);
    const graph = new GraphService(this.scope);
    const visibleScopes = this.scope.principal.scopes;
    const drafts = new Map<string, TraceDraft>();
    const ctx: HandlerContext = {
      base: { ...base, strategy: 'HYBRID', route: traceOf(route) },
      decision,
      resolved,
      asOf: base.asOf,
      compile: async (request) => {
        const compiled = await compiler.compile(request);
        drafts.set(compiled.pack.traceId, compiled.trace);
        return compiled.pack;
      },
      attributesAt: (entity: EntityMatch, asOf) =>
        attributeVersionAt(this.scope.db, entity.namespace, entity.key, asOf, visibleScopes),
      paths: (namespace, from, to) => graph.paths({ namespace, from, to, asOf: base.asOf }),
      facets: (namespace, window: TimeWindow | null) =>
        this.facetsOf(namespace, window?.since ?? null, window?.until ?? null),
    };
    const result = await HANDLERS[decision.queryType](ctx);
    const { pack, compacted, replacements } = await compactSessions(
      this.scope.db,
      result.pack,
      visibleScopes,
      this.scope.deps.config.charsPerToken,
    );
    const served: RouteValue = {
      ...route,
      lookupMode: result.lookupMode ?? route.lookupMode,
      attributeValue: result.attribute,
      paths: result.paths,
      facets: result.facets,
      compactedSessions: compacted,
      notes: [...route.notes, ...result.notes],
    };
    const draft = drafts.get(pack.traceId);
    if (!draft) throw new Error(`the handler for ${decision.queryType} served a pack it did not compile`);
    const [traced, invalidatedFacts] = await Promise.all([
      compiler.serve(
        withReplacements({ ...draft, request: { ...draft.request, route: traceOf(served) } }, replacements),
        pack,
      ),
      decision.queryType === 'NO_SEARCH'
        ? Promise.resolve([])
        : this.invalidatedAlongside(pack, resolved, base.asOf ?? new Date()),
    ]);
    return { ...traced, route: served, invalidatedFacts };
  }

  private async decide(
    namespaces: string[],
    query: string,
    referenceTime: Date | null,
  ): Promise<{ route: RouteValue; decision: RouteDecision; resolved: EntityMatch[] }> {
    const reference = referenceTime ?? new Date();
    const rules = routeByRules(query, reference);
    const llm = llmFor(this.scope.deps.config);
    const visibleScopes = this.scope.principal.scopes;
    let refined: Awaited<ReturnType<typeof refineRoute>> = {
      decision: rules,
      source: 'RULES',
      fallbackReason: null,
    };
    if (llm.available && rules.queryType !== 'NO_SEARCH') {
      const candidates = (
        await Promise.all(
          namespaces.map((ns) => candidateEntityNames(this.scope.db, ns, rules.entityHints, visibleScopes)),
        )
      ).flat();
      const timeoutMs = Math.min(DEFAULT_ROUTER_TIMEOUT_MS, this.scope.deps.config.statementTimeoutMs);
      refined = await refineRoute(llm, query, rules, [...new Set(candidates)], timeoutMs);
      if (refined.fallbackReason) {
        this.scope.deps.logger.warn('router LLM fallback', { reason: refined.fallbackReason });
      }
    }
    const decision = refined.decision;
    const resolved = await this.resolve(namespaces, decision.entityHints);
    const route: RouteValue = {
      queryType: decision.queryType,
      lookupMode: decision.lookupMode,
      entityHints: decision.entityHints,
      resolvedEntities: resolved.map((e) => ({
        hint: e.hint,
        namespace: e.namespace,
        key: e.key,
        title: e.title,
        matchedBy: e.matchedBy,
      })),
      attribute: decision.attribute,
      timeWindow: decision.timeWindow,
      referenceTime: reference,
      source: refined.source,
      fallbackReason: refined.fallbackReason,
      reason: decision.reason,
      attributeValue: null,
      paths: [],
      facets: null,
      compactedSessions: [],
      notes: [],
    };
    return { route, decision, resolved };
  }

  /** Each hint's best entity across the namespaces (first namespace wins a tie), deduplicated. */
  private async resolve(namespaces: string[], hints: string[]): Promise<EntityMatch[]> {
    if (hints.length === 0) return [];
    const visibleScopes = this.scope.principal.scopes;
    const perNs = await Promise.all(
      namespaces.map((ns) => resolveEntityHints(this.scope.db, ns, hints, visibleScopes)),
    );
    const out: EntityMatch[] = [];
    const rank = { KEY: 0, TITLE: 1, ALIAS: 1, TRIGRAM: 2 } as const;
    for (const hint of hints) {
      const matches = perNs.flat().filter((m) => m.hint === hint);
      matches.sort((a, b) => rank[a.matchedBy] - rank[b.matchedBy]);
      const best = matches[0];
      if (best && !out.some((e) => e.namespace === best.namespace && e.key === best.key)) out.push(best);
    }
    return out;
  }

  private async facetsOf(namespace: string, since: Date | null, until: Date | null): Promise<FacetsValue> {
    const w = { since, until, limit: FACET_LIMIT };
    const visibleScopes = this.scope.principal.scopes;
    const [topics, entities, predicates] = await Promise.all([
      topicFacets(this.scope.db, namespace, w, visibleScopes),
      entityFacets(this.scope.db, namespace, w, visibleScopes),
      predicateFacets(this.scope.db, namespace, w, visibleScopes),
    ]);
    return { topics, entities, predicates };
  }

  /**
   * Facts that were true before and no longer are at `asOf`, about the resolved entities and
   * the subjects and objects of the packed facts: superseded or closed. Listed apart from the pack.
   */
  private async invalidatedAlongside(
    pack: ContextPackValue,
    resolved: EntityMatch[],
    asOf: Date,
  ): Promise<FactRow[]> {
    const visibleScopes = this.scope.principal.scopes;
    const keysByNs = new Map<string, Set<string>>();
    const add = (ns: string, key: string) => {
      if (!keysByNs.has(ns)) keysByNs.set(ns, new Set());
      keysByNs.get(ns)!.add(key);
    };
    for (const e of resolved) add(e.namespace, e.key);
    const factIdsByNs = new Map<string, string[]>();
    for (const section of pack.sections) {
      for (const item of section.items) {
        if (item.kind !== 'fact' || !item.namespace) continue;
        const parsed = parseGlobalId(item.id);
        const factId = parsed?.parts[parsed.parts.length - 1];
        if (typeof factId !== 'string') continue;
        factIdsByNs.set(item.namespace, [...(factIdsByNs.get(item.namespace) ?? []), factId]);
      }
    }
    await Promise.all(
      [...factIdsByNs].map(async ([ns, ids]) => {
        for (const f of await findFactsByIds(this.scope.db, ns, ids, visibleScopes)) {
          if (!f) continue;
          add(ns, f.subject);
          add(ns, f.object);
        }
      }),
    );
    const lists = await Promise.all(
      [...keysByNs].map(([ns, keys]) =>
        invalidatedFactsOf(this.scope.db, ns, [...keys], asOf, visibleScopes, INVALIDATED_LIMIT),
      ),
    );
    return lists.flat().slice(0, INVALIDATED_LIMIT);
  }
}

/** The routing decision as stored in the context trace (JSON, no handler output). */
function traceOf(route: RouteValue): Record<string, unknown> {
  const w = route.timeWindow;
  return {
    queryType: route.queryType,
    lookupMode: route.lookupMode,
    entityHints: route.entityHints,
    resolvedEntities: route.resolvedEntities.map((e) => `${e.namespace}/${e.key}`),
    attribute: route.attribute,
    timeWindow: w
      ? {
          kind: w.kind,
          since: w.since?.toISOString() ?? null,
          until: w.until?.toISOString() ?? null,
          phrase: w.phrase,
        }
      : null,
    referenceTime: route.referenceTime.toISOString(),
    source: route.source,
    fallbackReason: route.fallbackReason,
  };
}
