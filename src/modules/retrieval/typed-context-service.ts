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
import { forWrites } from '../../db/database.js';
import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { type NamespaceSchema, canonicalKind } from '../../domain/domain-pack.js';
import { canonicalJson, sha256Hex } from '../../domain/ids.js';
import { badInput, parseInput } from '../../errors.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import { MatchBudget } from '../../domain/regex-safety.js';
import { kindSchema, namespaceSchema } from '../../kernel/validation.js';
import { schemaPolicyFor } from '../domain-packs/index.js';
import { type EntityAsOf, entitiesAsOf, insertTypedTraces } from './store/typed-traversal-store.js';
import { resolveAnchors } from './typed-anchors.js';
import {
  type AnchorResolution,
  type Reached,
  type ResolutionRoute,
  type TraceDecision,
  type TraversalStep,
  TYPED_LIMITS,
  cmp,
  sortKeys,
} from './typed-context-model.js';
import { type StepReport, type WalkState, type WalkedFact, walkSteps } from './typed-walk.js';

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

type TypedContextInput = z.infer<typeof typedContextInputSchema>;

/** The parsed request: its namespaces (each once), steps with defaults, the instant walked. */
interface TypedRequest {
  input: TypedContextInput;
  namespaces: string[];
  steps: TraversalStep[];
  now: Date;
  asOf: Date;
}

/** An entity the walk reached, as of the request's instant. */
interface ReachedEntity {
  namespace: string;
  row: EntityAsOf;
  reached: Reached;
}

/** What one namespace contributed: its anchors' resolutions, entities, facts and trace. */
interface NamespaceWalk {
  namespace: string;
  schema: NamespaceSchema;
  resolutions: AnchorResolution[][];
  entities: ReachedEntity[];
  facts: WalkedFact[];
  trace: { channels: unknown; decisions: TraceDecision[]; visibility: Set<string> };
  warnings: string[];
}

/** The answer before its trace id and warnings. */
type TypedResult = Omit<TypedContextValue, 'warnings' | 'traceId'>;

export class TypedContextService {
  constructor(private readonly scope: RequestScope) {}

  async typedContext(raw: unknown): Promise<TypedContextValue> {
    const input = parseInput(typedContextInputSchema, raw, 'typedContext input');
    const namespaces = [...new Set(input.namespaces)];
    for (const ns of namespaces) assertCanRead(this.scope.principal, ns);
    const request = typedRequestOf(input, namespaces);
    const patternBudget = new MatchBudget(TYPED_LIMITS.patternBudgetMs);
    const walks: NamespaceWalk[] = [];
    for (const ns of namespaces) walks.push(await this.walkNamespace(request, ns, patternBudget));
    const result = assembleResult(walks, anchorReports(input.anchors, walks));
    const traceId = traceIdOf(this.scope.principal.id, request, walks, result);
    const warnings = walks.flatMap((w) => w.warnings);
    if (!(await this.saveTraces(traceId, request, walks))) {
      warnings.push('trace_not_saved: the trace of this traversal could not be stored');
    }
    if (patternBudget.exhausted) {
      warnings.push('pattern_budget_exhausted: some anchors were not matched against id patterns');
    }
    return { ...result, warnings, traceId };
  }

  /** Resolves the anchors in one namespace, walks the steps from them, reads what was reached. */
  private async walkNamespace(
    request: TypedRequest,
    ns: string,
    patternBudget: MatchBudget,
  ): Promise<NamespaceWalk> {
    const { input, asOf, now } = request;
    const db = this.scope.db;
    const visibleScopes = this.scope.principal.scopes;
    const schema = await schemaPolicyFor(this.scope).schemaFor(db, ns);
    const resolutions = await resolveAnchors(
      this.scope,
      ns,
      schema,
      input.anchors,
      Boolean(input.allowSemantic),
      patternBudget,
    );
    const state = anchorsReached(resolutions);
    const anchorKeys = sortKeys([...state.reached.keys()]);
    const ctx = { db, namespace: ns, schema, visibleScopes, asOf, now };
    const steps = await walkSteps(ctx, request.steps, anchorKeys, state);
    const rows = await entitiesAsOf(db, ns, [...state.reached.keys()], asOf, visibleScopes);
    const entities = rows.map((row) => ({ namespace: ns, row, reached: state.reached.get(row.key)! }));
    const facts = [...state.facts.values()];
    const trace = {
      channels: { typed: typedChannel(input, resolutions, schema, steps) },
      decisions: state.decisions,
      visibility: visibilityOf(entities, facts),
    };
    return { namespace: ns, schema, resolutions, entities, facts, trace, warnings: state.warnings };
  }

  /** Stores one trace per namespace; false (logged) when that fails, the answer stands. */
  private async saveTraces(traceId: string, request: TypedRequest, walks: NamespaceWalk[]): Promise<boolean> {
    try {
      await insertTypedTraces(
        forWrites(this.scope.db),
        walks.map((w) => ({
          namespace: w.namespace,
          traceId,
          principalId: this.scope.principal.id,
          request: requestOf(request),
          channels: w.trace.channels,
          decisions: w.trace.decisions,
          visibility: [...w.trace.visibility].sort(),
        })),
      );
      return true;
    } catch (error) {
      this.scope.deps.logger.error('typedContext trace not saved', { error: String(error) });
      return false;
    }
  }
}

function typedRequestOf(input: TypedContextInput, namespaces: string[]): TypedRequest {
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
  return { input, namespaces, steps, now, asOf: input.asOf ?? now };
}

/** The walk's starting state: every resolved anchor reached at step 0, with its decision. */
function anchorsReached(resolutions: AnchorResolution[][]): WalkState {
  const state: WalkState = { reached: new Map(), facts: new Map(), decisions: [], warnings: [] };
  resolutions.forEach((list, i) => {
    for (const r of list) {
      if (!state.reached.has(r.key)) state.reached.set(r.key, { step: 0, depth: 0, anchor: true });
      state.decisions.push({
        id: r.key,
        kind: 'entity',
        decision: 'included',
        reason: `anchor ${i}: ${r.resolvedBy}`,
      });
    }
  });
  return state;
}

/** The `typed` channel of a namespace's trace. */
function typedChannel(
  input: TypedContextInput,
  resolutions: AnchorResolution[][],
  schema: NamespaceSchema,
  steps: StepReport[],
): unknown {
  return {
    anchors: input.anchors.length,
    resolved: resolutions.filter((l) => l.length > 0).length,
    packs: schema.packs,
    steps,
  };
}

/** Every visibility scope of what a namespace's trace reveals (its entities and facts). */
function visibilityOf(entities: readonly ReachedEntity[], facts: readonly WalkedFact[]): Set<string> {
  const visibility = new Set<string>();
  for (const { row } of entities) for (const v of row.visibility) visibility.add(v);
  for (const { fact } of facts) for (const v of fact.visibility) visibility.add(v);
  return visibility;
}

/** Per anchor, its matches in every namespace, in key order; the first match's route names it. */
function anchorReports(
  anchors: readonly { kind: string; value: string }[],
  walks: NamespaceWalk[],
): AnchorReport[] {
  return anchors.map((a, i) => {
    const matches = walks
      .flatMap((w) => w.resolutions[i]!)
      .sort((x, y) => cmp(x.namespace, y.namespace) || cmp(x.key, y.key));
    return {
      kind: a.kind,
      value: a.value,
      resolved: matches.length > 0,
      resolvedBy: matches[0]?.resolvedBy ?? null,
      matches,
    };
  });
}

/** The answer's lists, each in its fixed order. */
function assembleResult(walks: NamespaceWalk[], anchors: AnchorReport[]): TypedResult {
  const entities = walks.flatMap((w) => w.entities);
  const facts = orderedFacts(walks);
  return {
    anchors,
    unresolved: anchors.filter((r) => !r.resolved).map((r) => `${r.kind}:${r.value}`),
    sections: sectionsOf(entities, new Map(walks.map((w) => [w.namespace, w.schema]))),
    facts,
    sources: sourcesOf(entities),
    used: usedOf(entities, facts),
  };
}

/** Entities by canonical kind, kinds and entities in key order. */
function sectionsOf(
  entities: readonly ReachedEntity[],
  schemas: ReadonlyMap<string, NamespaceSchema>,
): TypedContextValue['sections'] {
  const byKind = new Map<string, TypedEntity[]>();
  for (const { namespace, row, reached } of entities) {
    const kind = canonicalKind(schemas.get(namespace)!, row.kind) ?? row.kind;
    const list = byKind.get(kind) ?? [];
    list.push({
      namespace,
      key: row.key,
      kind: row.kind,
      title: row.title,
      attributes: row.attributes,
      attributesValidFrom: isoOrNull(row.attributesFrom),
      stale: row.stale,
      anchor: reached.anchor,
      step: reached.step,
      depth: reached.depth,
      sourcePath: row.sourcePath,
    });
    byKind.set(kind, list);
  }
  return [...byKind.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([kind, list]) => ({
      kind,
      entities: list.sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.key, b.key)),
    }));
}

/** Walk order: step, level, namespace, then the level's own order (other endpoint's key, fact id). */
function orderedFacts(walks: readonly NamespaceWalk[]): FactRow[] {
  return walks
    .flatMap((w) => w.facts.map((f) => ({ ...f, namespace: w.namespace })))
    .sort((a, b) => a.step - b.step || a.depth - b.depth || cmp(a.namespace, b.namespace) || a.seq - b.seq)
    .map((f) => f.fact);
}

function sourcesOf(entities: readonly ReachedEntity[]): TypedContextValue['sources'] {
  return entities
    .filter(({ row }) => row.sourcePath !== null || row.kind === 'document')
    .map(({ namespace, row }) => ({ namespace, key: row.key, title: row.title, sourcePath: row.sourcePath }))
    .sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.key, b.key));
}

function usedOf(entities: readonly ReachedEntity[], facts: readonly FactRow[]): TypedContextValue['used'] {
  return {
    entities: entities.map(({ namespace, row }) => `${namespace}:${row.key}`).sort(cmp),
    facts: facts.map((f) => `${f.namespace}:${f.factId}`).sort(cmp),
    snapshots: [
      ...new Set(
        entities
          .filter(({ row }) => row.snapshotId)
          .map(({ namespace, row }) => `${namespace}:${row.snapshotScope}#${row.snapshotId}`),
      ),
    ].sort(cmp),
  };
}

/** The request as its trace records it. */
function requestOf(request: TypedRequest): Record<string, unknown> {
  const { input } = request;
  return {
    namespaces: request.namespaces,
    anchors: input.anchors,
    traverse: request.steps,
    asOf: input.asOf ? input.asOf.toISOString() : null,
    allowSemantic: Boolean(input.allowSemantic),
  };
}

/** Same principal, request and result → same id: an identical traversal reuses its trace. */
function traceIdOf(
  principalId: string,
  request: TypedRequest,
  walks: NamespaceWalk[],
  result: TypedResult,
): string {
  const hash = sha256Hex(
    canonicalJson({
      principal: principalId,
      request: requestOf(request),
      anchors: result.anchors,
      entities: walks.flatMap((w) =>
        w.entities.map(({ namespace, row }) => [namespace, row.key, isoOrNull(row.attributesFrom)]),
      ),
      facts: result.facts.map((f) => [f.namespace, f.factId, isoOrNull(f.validTo), f.status]),
    }),
  );
  return `typed-${hash.slice(0, 24)}`;
}

function isoOrNull(value: Date | string | null): string | null {
  return value ? new Date(value).toISOString() : null;
}
