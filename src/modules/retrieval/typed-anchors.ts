/**
 * Anchor resolution for typedContext: per namespace, each anchor `{kind, value}` takes the
 * routes in order and stops at the first that finds something — exact key, alias, idPattern,
 * then (only when allowed) semantic. Each route is one statement for every anchor still pending.
 */
import { type CompiledKind, type NamespaceSchema, kindSpellings } from '../../domain/domain-pack.js';
import { type KeyTemplate, fillTemplate, likePattern, matchTemplate } from '../../domain/key-template.js';
import { MAX_MATCH_INPUT, type MatchBudget } from '../../domain/regex-safety.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { type AnchorCandidate, matchAnchorCandidates, nearestOwners } from './store/typed-traversal-store.js';
import { type AnchorResolution, type ResolutionRoute, TYPED_LIMITS } from './typed-context-model.js';

export interface Anchor {
  kind: string;
  value: string;
}

type Candidate = AnchorCandidate & { detail: Record<string, unknown> | null };

/** One namespace's resolution in progress: per anchor, the entities it resolved to so far. */
interface Resolution {
  scope: RequestScope;
  namespace: string;
  schema: NamespaceSchema;
  anchors: readonly Anchor[];
  /** Time the request may still spend matching id patterns (shared by its namespaces). */
  budget: MatchBudget;
  out: AnchorResolution[][];
}

/** Per anchor, the entities it names in this namespace (empty when unresolved). */
export async function resolveAnchors(
  scope: RequestScope,
  namespace: string,
  schema: NamespaceSchema,
  anchors: readonly Anchor[],
  allowSemantic: boolean,
  budget: MatchBudget,
): Promise<AnchorResolution[][]> {
  const r: Resolution = { scope, namespace, schema, anchors, budget, out: anchors.map(() => []) };
  await matchRoute(r, 'exact', exactCandidates(r, pending(r)));
  await matchRoute(
    r,
    'alias',
    pending(r).flatMap((i) => aliasCandidates(r, i)),
  );
  await matchRoute(
    r,
    'pattern',
    pending(r).flatMap((i) => patternCandidates(r, i)),
  );
  if (allowSemantic) await resolveSemantically(r, pending(r));
  return r.out;
}

/** The anchors no route has resolved yet. */
function pending(r: Resolution): number[] {
  return r.anchors.map((_, i) => i).filter((i) => r.out[i]!.length === 0);
}

/** The kind and its synonyms; null (any kind) for the generic `entity`. */
function kindsOf(r: Resolution, kind: string): string[] | null {
  return kind === 'entity' ? null : kindSpellings(r.schema, kind);
}

/** Looks the route's candidates up; each anchor's first matching candidate decides. */
async function matchRoute(r: Resolution, route: ResolutionRoute, candidates: Candidate[]): Promise<void> {
  if (candidates.length === 0) return;
  const matches = await matchAnchorCandidates(
    r.scope.db,
    r.namespace,
    candidates,
    TYPED_LIMITS.matchesPerAnchor,
    r.scope.principal.scopes,
  );
  const firstOrd = new Map<number, number>();
  for (const m of matches) if (!firstOrd.has(m.i)) firstOrd.set(m.i, m.ord);
  for (const m of matches) {
    if (firstOrd.get(m.i) !== m.ord) continue;
    const c = candidates.find((x) => x.i === m.i && x.ord === m.ord)!;
    const list = r.out[m.i]!;
    if (list.length >= TYPED_LIMITS.matchesPerAnchor || list.some((x) => x.key === m.key)) continue;
    list.push({
      namespace: r.namespace,
      key: m.key,
      kind: m.kind,
      resolvedBy: route,
      evidence: 'ASSERTED',
      detail: c.detail,
    });
  }
}

/** Route 1: an entity of the kind whose key is the value. */
function exactCandidates(r: Resolution, waiting: number[]): Candidate[] {
  return waiting.map((i) => ({
    i,
    ord: 0,
    kinds: kindsOf(r, r.anchors[i]!.kind),
    key: r.anchors[i]!.value,
    detail: null,
  }));
}

/** Route 2: the value read through the kind's alias templates, then the entities' own aliases. */
function aliasCandidates(r: Resolution, i: number): Candidate[] {
  const a = r.anchors[i]!;
  const def = r.schema.kinds.get(a.kind);
  const kinds = kindsOf(r, a.kind);
  const list: Candidate[] = [];
  let ord = 0;
  for (const alias of def?.aliases ?? []) {
    const c = aliasCandidate(i, ord, kinds, def!.naturalKey, alias, a.value);
    if (c) list.push(c);
    ord += 1;
  }
  list.push({ i, ord, kinds, alias: a.value, detail: { entityAlias: a.value } });
  return list;
}

/** An identifier an idPattern extracted, with the pattern's named groups. */
interface Extracted {
  id: string;
  groups: Record<string, string>;
  pattern: string;
}

/** Route 3: identifiers the kind's idPatterns extract, as keys, natural keys and aliases. */
function patternCandidates(r: Resolution, i: number): Candidate[] {
  const a = r.anchors[i]!;
  const def = r.schema.kinds.get(a.kind);
  if (!def || def.idPatterns.length === 0) return [];
  const kinds = kindsOf(r, a.kind);
  let ord = 0;
  const next = () => ord++;
  return extractIds(def, a.value.slice(0, MAX_MATCH_INPUT), r.budget).flatMap((x) =>
    extractedCandidates(i, kinds, def, x, next),
  );
}

/** What each idPattern finds in the value (its first five matches): group `id`, else the first, else the match. */
function extractIds(def: CompiledKind, value: string, budget: MatchBudget): Extracted[] {
  const found: Extracted[] = [];
  for (const p of def.idPatterns) {
    if (budget.exhausted) break;
    for (const m of budget.charge(() => p.re.findAll(value, 5))) {
      const groups = { ...m.groups };
      const id = groups.id ?? m.firstGroup ?? m.text;
      if (id) found.push({ id, groups, pattern: p.source });
    }
  }
  return found;
}

/**
 * The candidates of one extracted identifier, in order of preference: the key itself, the
 * natural key its groups fill (or a pattern over it), the kind's aliases, the entities' own.
 * `next` numbers them across the anchor (an alias that does not apply still takes its number).
 */
function extractedCandidates(
  i: number,
  kinds: string[] | null,
  def: CompiledKind,
  x: Extracted,
  next: () => number,
): Candidate[] {
  const detail = { pattern: x.pattern, extracted: x.id };
  const list: Candidate[] = [{ i, ord: next(), kinds, key: x.id, detail }];
  const nk = def.naturalKey;
  if (nk && 'template' in nk) {
    const bindings: Record<string, string> = { ...x.groups };
    if (nk.template.placeholders.length === 1) bindings[nk.template.placeholders[0]!] ??= x.id;
    const full = fillTemplate(nk.template, bindings);
    if (full) list.push({ i, ord: next(), kinds, key: full, detail: { ...detail, naturalKey: full } });
    else if (Object.keys(bindings).some((b) => nk.template.placeholders.includes(b))) {
      list.push({ i, ord: next(), kinds, pattern: likePattern(nk.template, bindings), detail });
    }
  }
  for (const alias of def.aliases) {
    const c = aliasCandidate(i, next(), kinds, nk, alias, x.id);
    if (c) list.push({ ...c, detail: { ...detail, ...c.detail } });
  }
  list.push({ i, ord: next(), kinds, alias: x.id, detail: { ...detail, entityAlias: x.id } });
  return list;
}

/** Route 4, only when allowed: the entity of the kind owning the chunk nearest to the value. */
async function resolveSemantically(r: Resolution, waiting: number[]): Promise<void> {
  if (waiting.length === 0) return;
  const vectors = await r.scope.deps.embedder.embed(waiting.map((i) => r.anchors[i]!.value));
  for (const [n, i] of waiting.entries()) {
    const kinds = kindsOf(r, r.anchors[i]!.kind);
    const hits = await nearestOwners(
      r.scope.db,
      r.namespace,
      vectors[n]!,
      kinds,
      50,
      r.scope.principal.scopes,
    );
    const best = hits.find((h) => h.score >= TYPED_LIMITS.semanticMinScore);
    if (!best) continue;
    r.out[i]!.push({
      namespace: r.namespace,
      key: best.key,
      kind: best.kind,
      resolvedBy: 'semantic',
      evidence: 'INFERRED',
      detail: { score: Math.round(best.score * 1e6) / 1e6, chunkId: best.chunkId },
    });
  }
}

/** A candidate from an alias template read over `value`; null when the value has another shape. */
function aliasCandidate(
  i: number,
  ord: number,
  kinds: string[] | null,
  naturalKey: CompiledKind['naturalKey'],
  alias: KeyTemplate,
  value: string,
): Candidate | null {
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
