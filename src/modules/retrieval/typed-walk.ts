/**
 * The traversal of typedContext in one namespace: each step walks one relation breadth-first
 * from the anchors or from the previous step's new entities, one statement per level.
 */
import type { NamespaceSchema } from '../../domain/domain-pack.js';
import type { Queryable } from '../../db/database.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import { type LevelEdge, traversalLevel } from './store/typed-traversal-store.js';
import {
  type Reached,
  type TraceDecision,
  type TraversalStep,
  TYPED_LIMITS,
  sortKeys,
} from './typed-context-model.js';

/** Where and as of when one namespace is walked. */
export interface WalkContext {
  db: Queryable;
  namespace: string;
  schema: NamespaceSchema;
  visibleScopes: string[] | null;
  asOf: Date;
  /** A relation declared `temporal: false` is walked as it is now. */
  now: Date;
}

/** A fact the walk took, with the step and level that first took it and its place in that level. */
export interface WalkedFact {
  fact: FactRow;
  step: number;
  depth: number;
  seq: number;
}

/** What the walk of one namespace has gathered so far (the anchors are reached before it starts). */
export interface WalkState {
  reached: Map<string, Reached>;
  /** By fact id, in the order taken. */
  facts: Map<string, WalkedFact>;
  decisions: TraceDecision[];
  warnings: string[];
}

export interface LevelReport {
  depth: number;
  frontier: number;
  edges: number;
  newEntities: number;
}

export type StepReport = TraversalStep & {
  temporal: boolean;
  walkedAsOf: string;
  levels: LevelReport[];
  newEntities: number;
};

/** Walks every step in order; the reports go to the trace. */
export async function walkSteps(
  ctx: WalkContext,
  steps: readonly TraversalStep[],
  anchorKeys: string[],
  state: WalkState,
): Promise<StepReport[]> {
  let previous: string[] = [];
  const reports: StepReport[] = [];
  for (const [s, step] of steps.entries()) {
    const walked = await walkStep(ctx, step, s + 1, step.from === 'previous' ? previous : anchorKeys, state);
    previous = walked.newKeys;
    reports.push(walked.report);
  }
  return reports;
}

/** One step: level after level until its depth, its limit or an empty frontier. */
async function walkStep(
  ctx: WalkContext,
  step: TraversalStep,
  number: number,
  start: string[],
  state: WalkState,
): Promise<{ report: StepReport; newKeys: string[] }> {
  const temporal = ctx.schema.relations.get(step.relation)?.temporal ?? true;
  const asOf = temporal ? ctx.asOf : ctx.now;
  let frontier = start;
  const stepNew: string[] = [];
  const levels: LevelReport[] = [];
  for (let depth = 1; depth <= step.depth && frontier.length > 0; depth += 1) {
    const remaining = step.limit - stepNew.length;
    if (remaining <= 0) break;
    const fresh = await walkLevel(ctx, state, { step, number, depth, frontier, remaining, asOf });
    levels.push({ depth, frontier: frontier.length, edges: fresh.edges, newEntities: fresh.keys.length });
    stepNew.push(...fresh.keys);
    frontier = sortKeys(fresh.keys);
  }
  const report = { ...step, temporal, walkedAsOf: asOf.toISOString(), levels, newEntities: stepNew.length };
  return { report, newKeys: sortKeys(stepNew) };
}

interface Level {
  step: TraversalStep;
  number: number;
  depth: number;
  frontier: string[];
  remaining: number;
  asOf: Date;
}

/** One breadth level: its edges (one statement), the entities and facts they add. */
async function walkLevel(
  ctx: WalkContext,
  state: WalkState,
  level: Level,
): Promise<{ keys: string[]; edges: number }> {
  const edges = await traversalLevel(
    ctx.db,
    ctx.namespace,
    {
      frontier: level.frontier,
      relation: level.step.relation,
      direction: level.step.direction,
      asOf: level.asOf,
      seen: [...state.reached.keys()],
      remaining: level.remaining,
      edgeCap: TYPED_LIMITS.edgesPerLevel,
    },
    ctx.visibleScopes,
  );
  if (edges.length >= TYPED_LIMITS.edgesPerLevel) {
    state.warnings.push(
      `${ctx.namespace}: step ${level.number} depth ${level.depth} kept the first ${TYPED_LIMITS.edgesPerLevel} edges`,
    );
  }
  const keys: string[] = [];
  for (const edge of edges) {
    if (takeEntity(state, edge, level)) keys.push(edge.other);
    takeFact(state, edge, level);
  }
  return { keys, edges: edges.length };
}

/** The edge's other endpoint, if it is new: reached at this level. */
function takeEntity(state: WalkState, edge: LevelEdge, level: Level): boolean {
  if (!edge.isNew || state.reached.has(edge.other)) return false;
  state.reached.set(edge.other, { step: level.number, depth: level.depth, anchor: false });
  state.decisions.push({
    id: edge.other,
    kind: 'entity',
    decision: 'included',
    reason: `step ${level.number} depth ${level.depth} via ${edge.factId}`,
  });
  return true;
}

/** The edge's fact, the first time the walk meets it. */
function takeFact(state: WalkState, edge: LevelEdge, level: Level): void {
  if (state.facts.has(edge.factId)) return;
  const { fromKey: _f, other: _o, isNew: _n, ...fact } = edge;
  state.facts.set(edge.factId, { fact, step: level.number, depth: level.depth, seq: state.facts.size });
  state.decisions.push({
    id: edge.factId,
    kind: 'fact',
    decision: 'included',
    reason: `step ${level.number} depth ${level.depth}`,
  });
}
