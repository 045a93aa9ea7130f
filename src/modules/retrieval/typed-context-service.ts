/**
 * typedContext: deterministic traversal from anchors through domain-pack relations as of a time
 * (DESIGN §3). No ranking, no model: the same input and data give the same output, trace id
 * included.
 *
 * Anchors `{kind, value}` resolve in order, per namespace, stopping at the first route that
 * finds something:
 *   1. exact   — an entity of that kind (or a synonym) whose key is the value;
 *   2. alias   — the value read through the kind's alias templates (placeholders from the
 *                natural key template and from attributes), or one of an entity's own aliases;
 *   3. pattern — identifiers the kind's idPatterns extract from the value (named group `id`, else
 *                the first group, else the match; other named groups fill the natural key), looked
 *                up as keys, natural keys and aliases;
 *   4. semantic — only with allowSemantic: the nearest chunk owned by an entity of that kind
 *                (evidence INFERRED).
 * Unresolved anchors are listed, not errors.
 *
 * Steps walk one relation each (direction OUT/IN/BOTH, depth 1–5 breadth levels, at most
 * `limit` new entities per step, from the anchors or from the previous step's new entities).
 * Only facts valid at asOf are walked (ACTIVE or SUPERSEDED, validFrom ≤ asOf < validTo); a
 * relation a pack declares `temporal: false` is walked as it is now. Entities carry the
 * attribute version in force at asOf. New entities of a level are taken in key order.
 */
import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { type NamespaceSchema, canonicalKind, kindSpellings } from '../../domain/domain-pack.js';
import { canonicalJson, sha256Hex } from '../../domain/ids.js';
import { type KeyTemplate, fillTemplate, likePattern, matchTemplate } from '../../domain/key-template.js';
import { MAX_MATCH_INPUT, MatchBudget } from '../../domain/regex-safety.js';
import { badInput, parseInput } from '../../errors.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import {
  type AnchorCandidate,
  type EntityAsOf,
  nearestOwners,
  entitiesAsOf,
  insertTypedTraces,
  matchAnchorCandidates,
  traversalLevel,
} from './store/typed-traversal-store.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { schemaPolicyFor } from '../domain-packs/schema-policy.js';
import { kindSchema, namespaceSchema } from '../../kernel/validation.js';

export const TYPED_LIMITS = {
  namespaces: 10,
  anchors: 50,
  steps: 10,
  maxDepth: 5,
  maxLimit: 200,
  /** Entities one anchor may resolve to (an alias can be ambiguous). */
  matchesPerAnchor: 10,
  /** Edges kept per breadth level (edges back to already-seen entities included). */
  edgesPerLevel: 2000,
  /** Minimum cosine similarity for a semantic anchor. */
  semanticMinScore: 0.3,
  /** Time one request may spend matching anchors against id patterns, in total. */
  patternBudgetMs: 250,
} as const;

const stepSchema = z.object({
  relation: z.string().min(1, 'relation must not be empty').max(256),
  direction: z.enum(['OUT', 'IN', 'BOTH']).nullish(),
  depth: z
    .number()
    .int()
    .min(1, 'depth must be between 1 and 5')
    .max(TYPED_LIMITS.maxDepth, 'depth must be between 1 and 5')
    .nullish(),
  limit: z
    .number()
    .int()
    .min(1, 'limit must be between 1 and 200')
    .max(TYPED_LIMITS.maxLimit, 'limit must be between 1 and 200')
    .nullish(),
  from: z.enum(['anchors', 'previous'], { error: 'from is "anchors" or "previous"' }).nullish(),
});

export const typedContextInputSchema = z.object({
  namespaces: z
    .array(namespaceSchema)
    .min(1, 'at least one namespace')
    .max(TYPED_LIMITS.namespaces, `at most ${TYPED_LIMITS.namespaces} namespaces`),
  anchors: z
    .array(
      z.object({ kind: kindSchema, value: z.string().min(1, 'an anchor value must not be empty').max(1024) }),
    )
    .max(TYPED_LIMITS.anchors, `at most ${TYPED_LIMITS.anchors} anchors`),
  traverse: z.array(stepSchema).max(TYPED_LIMITS.steps, `at most ${TYPED_LIMITS.steps} steps`),
  asOf: z.date().nullish(),
  allowSemantic: z.boolean().nullish(),
});

export type ResolutionRoute = 'exact' | 'alias' | 'pattern' | 'semantic';

export interface AnchorResolution {
  namespace: string;
  key: string;
  kind: string;
  resolvedBy: ResolutionRoute;
  evidence: 'ASSERTED' | 'INFERRED';
  /** What matched: the alias template, the pattern and the identifier it extracted, the score. */
  detail: Record<string, unknown> | null;
}

export interface AnchorReport {
  kind: string;
  value: string;
  resolved: boolean;
  /** The route of the first resolution (null when unresolved). */
  resolvedBy: ResolutionRoute | null;
  matches: AnchorResolution[];
}

export interface TypedEntity {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  attributes: Record<string, unknown> | null;
  attributesValidFrom: string | null;
  stale: boolean;
  anchor: boolean;
  /** First step (1-based) and breadth level that reached it; 0/0 for anchors. */
  step: number;
  depth: number;
  sourcePath: string | null;
}

export interface TypedContextValue {
  anchors: AnchorReport[];
  unresolved: string[];
  sections: { kind: string; entities: TypedEntity[] }[];
  facts: FactRow[];
  sources: { namespace: string; key: string; title: string; sourcePath: string | null }[];
  used: { entities: string[]; facts: string[]; snapshots: string[] };
  warnings: string[];
  traceId: string;
}

interface Reached {
  step: number;
  depth: number;
  anchor: boolean;
}

export class TypedContextService {
  constructor(private readonly scope: RequestScope) {}

  async typedContext(raw: unknown): Promise<TypedContextValue> {
    const input = parseInput(typedContextInputSchema, raw, 'typedContext input');
    const principal = this.scope.principal;
    const namespaces = [...new Set(input.namespaces)];
    for (const ns of namespaces) assertCanRead(principal, ns);
    const steps = input.traverse.map((s) => ({
      relation: s.relation,
      direction: s.direction ?? 'OUT',
      depth: s.depth ?? 1,
      limit: s.limit ?? 50,
      from: s.from ?? 'anchors',
    }));
    if (steps[0]?.from === 'previous')
      throw badInput('traverse[0]: the first step cannot start from "previous".');
    const now = new Date();
    const asOf = input.asOf ?? now;
    const vis = principal.scopes;
    const db = this.scope.db;
    const policy = schemaPolicyFor(this.scope);
    const warnings: string[] = [];

    const reports: AnchorReport[] = input.anchors.map((a) => ({
      kind: a.kind,
      value: a.value,
      resolved: false,
      resolvedBy: null,
      matches: [],
    }));
    const entityRows: { namespace: string; row: EntityAsOf; reached: Reached }[] = [];
    const facts = new Map<string, FactRow>();
    const factOrder: { key: string; namespace: string; step: number; depth: number; seq: number }[] = [];
    const traces: { namespace: string; channels: unknown; decisions: unknown[]; visibility: Set<string> }[] =
      [];

    const patternBudget = new MatchBudget(TYPED_LIMITS.patternBudgetMs);
    for (const ns of namespaces) {
      const schema = await policy.schemaFor(db, ns);
      const resolutions = await this.resolveAnchors(
        ns,
        schema,
        input.anchors,
        Boolean(input.allowSemantic),
        patternBudget,
      );
      const reached = new Map<string, Reached>();
      const decisions: unknown[] = [];
      resolutions.forEach((list, i) => {
        for (const r of list) {
          reports[i]!.matches.push(r);
          if (!reached.has(r.key)) reached.set(r.key, { step: 0, depth: 0, anchor: true });
          decisions.push({
            id: r.key,
            kind: 'entity',
            decision: 'included',
            reason: `anchor ${i}: ${r.resolvedBy}`,
          });
        }
      });
      const anchorKeys = sortKeys([...reached.keys()]);
      let previous: string[] = [];
      const stepReports: unknown[] = [];
      for (const [s, step] of steps.entries()) {
        const temporal = schema.relations.get(step.relation)?.temporal ?? true;
        let frontier = step.from === 'previous' ? previous : anchorKeys;
        const stepNew: string[] = [];
        const levels: unknown[] = [];
        for (let depth = 1; depth <= step.depth && frontier.length > 0; depth += 1) {
          const remaining = step.limit - stepNew.length;
          if (remaining <= 0) break;
          const edges = await traversalLevel(
            db,
            ns,
            {
              frontier,
              relation: step.relation,
              direction: step.direction,
              asOf: temporal ? asOf : now,
              seen: [...reached.keys()],
              remaining,
              edgeCap: TYPED_LIMITS.edgesPerLevel,
            },
            vis,
          );
          if (edges.length >= TYPED_LIMITS.edgesPerLevel) {
            warnings.push(
              `${ns}: step ${s + 1} depth ${depth} kept the first ${TYPED_LIMITS.edgesPerLevel} edges`,
            );
          }
          const fresh: string[] = [];
          for (const e of edges) {
            if (e.isNew && !reached.has(e.other)) {
              reached.set(e.other, { step: s + 1, depth, anchor: false });
              fresh.push(e.other);
              decisions.push({
                id: e.other,
                kind: 'entity',
                decision: 'included',
                reason: `step ${s + 1} depth ${depth} via ${e.factId}`,
              });
            }
            const id = `${ns}\u0000${e.factId}`;
            if (!facts.has(id)) {
              const { fromKey: _f, other: _o, isNew: _n, ...fact } = e;
              facts.set(id, fact);
              factOrder.push({ key: id, namespace: ns, step: s + 1, depth, seq: factOrder.length });
              decisions.push({
                id: e.factId,
                kind: 'fact',
                decision: 'included',
                reason: `step ${s + 1} depth ${depth}`,
              });
            }
          }
          levels.push({ depth, frontier: frontier.length, edges: edges.length, newEntities: fresh.length });
          stepNew.push(...fresh);
          frontier = sortKeys(fresh);
        }
        previous = sortKeys(stepNew);
        stepReports.push({
          ...step,
          temporal,
          walkedAsOf: (temporal ? asOf : now).toISOString(),
          levels,
          newEntities: stepNew.length,
        });
      }
      const rows = await entitiesAsOf(db, ns, [...reached.keys()], asOf, vis);
      const visibility = new Set<string>();
      for (const row of rows) {
        entityRows.push({ namespace: ns, row, reached: reached.get(row.key)! });
        for (const v of row.visibility) visibility.add(v);
      }
      for (const f of facts.values()) if (f.namespace === ns) for (const v of f.visibility) visibility.add(v);
      traces.push({
        namespace: ns,
        channels: {
          typed: {
            anchors: input.anchors.length,
            resolved: resolutions.filter((l) => l.length > 0).length,
            packs: schema.packs,
            steps: stepReports,
          },
        },
        decisions,
        visibility,
      });
    }

    // ---- output, in a fixed order
    for (const r of reports) {
      r.matches.sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.key, b.key));
      r.resolved = r.matches.length > 0;
      r.resolvedBy = r.matches[0]?.resolvedBy ?? null;
    }
    const unresolved = reports.filter((r) => !r.resolved).map((r) => `${r.kind}:${r.value}`);
    const schemas = new Map<string, NamespaceSchema>();
    for (const ns of namespaces) schemas.set(ns, await policy.schemaFor(db, ns));
    const byKind = new Map<string, TypedEntity[]>();
    for (const { namespace, row, reached } of entityRows) {
      const kind = canonicalKind(schemas.get(namespace)!, row.kind) ?? row.kind;
      const list = byKind.get(kind) ?? [];
      list.push({
        namespace,
        key: row.key,
        kind: row.kind,
        title: row.title,
        attributes: row.attributes,
        attributesValidFrom: row.attributesFrom ? new Date(row.attributesFrom).toISOString() : null,
        stale: row.stale,
        anchor: reached.anchor,
        step: reached.step,
        depth: reached.depth,
        sourcePath: row.sourcePath,
      });
      byKind.set(kind, list);
    }
    const sections = [...byKind.entries()]
      .sort(([a], [b]) => cmp(a, b))
      .map(([kind, entities]) => ({
        kind,
        entities: entities.sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.key, b.key)),
      }));
    const orderedFacts = factOrder
      // Walk order: step, level, namespace, then the level's own order (other endpoint's key, fact id).
      .sort((a, b) => a.step - b.step || a.depth - b.depth || cmp(a.namespace, b.namespace) || a.seq - b.seq)
      .map((f) => facts.get(f.key)!);
    const sources = entityRows
      .filter(({ row }) => row.sourcePath !== null || row.kind === 'document')
      .map(({ namespace, row }) => ({
        namespace,
        key: row.key,
        title: row.title,
        sourcePath: row.sourcePath,
      }))
      .sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.key, b.key));
    const used = {
      entities: entityRows.map(({ namespace, row }) => `${namespace}:${row.key}`).sort(cmp),
      facts: orderedFacts.map((f) => `${f.namespace}:${f.factId}`).sort(cmp),
      snapshots: [
        ...new Set(
          entityRows
            .filter(({ row }) => row.snapshotId)
            .map(({ namespace, row }) => `${namespace}:${row.snapshotScope}#${row.snapshotId}`),
        ),
      ].sort(cmp),
    };

    const request = {
      namespaces,
      anchors: input.anchors,
      traverse: steps,
      asOf: input.asOf ? input.asOf.toISOString() : null,
      allowSemantic: Boolean(input.allowSemantic),
    };
    // Same principal, request and result → same id: an identical traversal reuses its trace.
    const traceId = `typed-${sha256Hex(
      canonicalJson({
        principal: principal.id,
        request,
        anchors: reports,
        entities: entityRows.map(({ namespace, row }) => [
          namespace,
          row.key,
          row.attributesFrom ? new Date(row.attributesFrom).toISOString() : null,
        ]),
        facts: orderedFacts.map((f) => [
          f.namespace,
          f.factId,
          f.validTo ? new Date(f.validTo).toISOString() : null,
          f.status,
        ]),
      }),
    ).slice(0, 24)}`;
    try {
      await insertTypedTraces(
        db,
        traces.map((t) => ({
          namespace: t.namespace,
          traceId,
          principalId: principal.id,
          request,
          channels: t.channels,
          decisions: t.decisions,
          visibility: [...t.visibility].sort(),
        })),
      );
    } catch (error) {
      this.scope.deps.logger.error('typedContext trace not saved', { error: String(error) });
      warnings.push('trace_not_saved: the trace of this traversal could not be stored');
    }
    if (patternBudget.exhausted) {
      warnings.push('pattern_budget_exhausted: some anchors were not matched against id patterns');
    }
    return { anchors: reports, unresolved, sections, facts: orderedFacts, sources, used, warnings, traceId };
  }

  /** Per anchor, the entities it names in this namespace (empty when unresolved). */
  private async resolveAnchors(
    ns: string,
    schema: NamespaceSchema,
    anchors: { kind: string; value: string }[],
    allowSemantic: boolean,
    budget: MatchBudget,
  ): Promise<AnchorResolution[][]> {
    const db = this.scope.db;
    const vis = this.scope.principal.scopes;
    const out: AnchorResolution[][] = anchors.map(() => []);
    const kindsOf = (kind: string) => (kind === 'entity' ? null : kindSpellings(schema, kind));
    const pending = () => anchors.map((_, i) => i).filter((i) => out[i]!.length === 0);

    const run = async (
      route: ResolutionRoute,
      candidates: (AnchorCandidate & { detail: Record<string, unknown> | null })[],
    ) => {
      if (candidates.length === 0) return;
      const matches = await matchAnchorCandidates(db, ns, candidates, TYPED_LIMITS.matchesPerAnchor, vis);
      const firstOrd = new Map<number, number>();
      for (const m of matches) if (!firstOrd.has(m.i)) firstOrd.set(m.i, m.ord);
      for (const m of matches) {
        if (firstOrd.get(m.i) !== m.ord) continue; // the anchor's first matching candidate decides
        const c = candidates.find((x) => x.i === m.i && x.ord === m.ord)!;
        const list = out[m.i]!;
        if (list.length >= TYPED_LIMITS.matchesPerAnchor || list.some((r) => r.key === m.key)) continue;
        list.push({
          namespace: ns,
          key: m.key,
          kind: m.kind,
          resolvedBy: route,
          evidence: 'ASSERTED',
          detail: c.detail,
        });
      }
    };

    // 1. exact key
    await run(
      'exact',
      pending().map((i) => ({
        i,
        ord: 0,
        kinds: kindsOf(anchors[i]!.kind),
        key: anchors[i]!.value,
        detail: null,
      })),
    );
    // 2. aliases of the kind, then the entities' own aliases
    await run(
      'alias',
      pending().flatMap((i) => {
        const a = anchors[i]!;
        const def = schema.kinds.get(a.kind);
        const kinds = kindsOf(a.kind);
        const list: (AnchorCandidate & { detail: Record<string, unknown> | null })[] = [];
        let ord = 0;
        for (const alias of def?.aliases ?? []) {
          const c = aliasCandidate(i, ord, kinds, def!.naturalKey, alias, a.value);
          if (c) list.push(c);
          ord += 1;
        }
        list.push({ i, ord, kinds, alias: a.value, detail: { entityAlias: a.value } });
        return list;
      }),
    );
    // 3. identifiers extracted by the kind's idPatterns
    await run(
      'pattern',
      pending().flatMap((i) => {
        const a = anchors[i]!;
        const def = schema.kinds.get(a.kind);
        if (!def || def.idPatterns.length === 0) return [];
        const kinds = kindsOf(a.kind);
        const value = a.value.slice(0, MAX_MATCH_INPUT);
        const list: (AnchorCandidate & { detail: Record<string, unknown> | null })[] = [];
        let ord = 0;
        for (const p of def.idPatterns) {
          if (budget.exhausted) break;
          for (const m of budget.charge(() => p.re.findAll(value, 5))) {
            const groups = { ...m.groups };
            const id = groups.id ?? m.firstGroup ?? m.text;
            if (!id) continue;
            const detail = { pattern: p.source, extracted: id };
            list.push({ i, ord: ord++, kinds, key: id, detail });
            const nk = def.naturalKey;
            if (nk && 'template' in nk) {
              const bindings: Record<string, string> = { ...groups };
              if (nk.template.placeholders.length === 1) bindings[nk.template.placeholders[0]!] ??= id;
              const full = fillTemplate(nk.template, bindings);
              if (full)
                list.push({ i, ord: ord++, kinds, key: full, detail: { ...detail, naturalKey: full } });
              else if (Object.keys(bindings).some((b) => nk.template.placeholders.includes(b))) {
                list.push({ i, ord: ord++, kinds, pattern: likePattern(nk.template, bindings), detail });
              }
            }
            for (const alias of def.aliases) {
              const c = aliasCandidate(i, ord++, kinds, nk, alias, id);
              if (c) list.push({ ...c, detail: { ...detail, ...c.detail } });
            }
            list.push({ i, ord: ord++, kinds, alias: id, detail: { ...detail, entityAlias: id } });
          }
        }
        return list;
      }),
    );
    // 4. semantic, only when allowed
    if (allowSemantic) {
      const waiting = pending();
      if (waiting.length > 0) {
        const vectors = await this.scope.deps.embedder.embed(waiting.map((i) => anchors[i]!.value));
        for (const [n, i] of waiting.entries()) {
          const kinds = kindsOf(anchors[i]!.kind);
          const hits = await nearestOwners(db, ns, vectors[n]!, kinds, 50, vis);
          const best = hits.find((h) => h.score >= TYPED_LIMITS.semanticMinScore);
          if (best) {
            out[i]!.push({
              namespace: ns,
              key: best.key,
              kind: best.kind,
              resolvedBy: 'semantic',
              evidence: 'INFERRED',
              detail: { score: Math.round(best.score * 1e6) / 1e6, chunkId: best.chunkId },
            });
          }
        }
      }
    }
    return out;
  }
}

/** A candidate from an alias template read over `value`; null when the value has another shape. */
function aliasCandidate(
  i: number,
  ord: number,
  kinds: string[] | null,
  naturalKey: { template: KeyTemplate } | { schema: unknown } | null,
  alias: KeyTemplate,
  value: string,
): (AnchorCandidate & { detail: Record<string, unknown> | null }) | null {
  const bindings = matchTemplate(alias, value);
  if (!bindings) return null;
  const detail = { alias: alias.source };
  if (naturalKey && 'template' in naturalKey) {
    const t = naturalKey.template;
    const keyBindings = Object.fromEntries(
      Object.entries(bindings).filter(([k]) => t.placeholders.includes(k)),
    );
    const attrs = Object.fromEntries(Object.entries(bindings).filter(([k]) => !t.placeholders.includes(k)));
    const full = fillTemplate(t, keyBindings);
    return {
      i,
      ord,
      kinds,
      key: full,
      pattern: full ? null : likePattern(t, keyBindings),
      attrs: Object.keys(attrs).length > 0 ? attrs : null,
      detail,
    };
  }
  return { i, ord, kinds, attrs: bindings, detail };
}

function sortKeys(keys: string[]): string[] {
  return [...keys].sort(cmp);
}

/** Code-unit order, as COLLATE "C" orders ASCII keys. */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
