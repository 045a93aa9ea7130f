/**
 * What the stages of typedContext share: its limits, a normalised traversal step, how an anchor
 * resolved, and the key order every list of the answer follows.
 */
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

/** A traversal step with its defaults filled in. */
export interface TraversalStep {
  relation: string;
  direction: 'OUT' | 'IN' | 'BOTH';
  depth: number;
  limit: number;
  from: 'anchors' | 'previous';
}

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

/** How an entity entered the result: as an anchor (step 0, depth 0), or by a step's level. */
export interface Reached {
  step: number;
  depth: number;
  anchor: boolean;
}

/** One line of a traversal trace: why an entity or fact is in the result. */
export interface TraceDecision {
  id: string;
  kind: 'entity' | 'fact';
  decision: 'included';
  reason: string;
}

export function sortKeys(keys: readonly string[]): string[] {
  return [...keys].sort(cmp);
}

/** Code-unit order, as COLLATE "C" orders ASCII keys. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
