/**
 * Stage 5, score: the union of every channel's list is fused by reference first, so that only
 * the best CANDIDATE_LIMIT are read back (the rest are counted, not traced); once read, blocked
 * and unreadable candidates leave the lists and the survivors are fused again and scored
 * (weighted RRF plus bonuses, every term kept).
 */
import { type FusedCandidate, fuse } from '../pipeline/fusion.js';
import { extractIdentifiers } from '../pipeline/identifiers.js';
import { textSignals } from '../pipeline/text-signals.js';
import type { CandidatePool } from './candidate-pool.js';
import { newerFirst } from './newer-first.js';
import { parseCandidateKey } from './candidates.js';
import type { CompilePlan } from './plan.js';
import type { RankLists } from './rank-lists.js';
import {
  type Scored,
  type SignalContext,
  compareScored,
  queryIdentifiers,
  scoreCandidate,
} from './signals.js';

/** Union of candidates scored. */
export const CANDIDATE_LIMIT = 256;

export interface UnionSelection {
  /** Candidate keys, best first by a reference-only fusion. */
  considered: string[];
  overLimit: number;
}

export function selectUnion(lists: RankLists, plan: CompilePlan): UnionSelection {
  const fused = fuse(lists, plan.weights, plan.settings.rrfK);
  return {
    considered: fused.slice(0, CANDIDATE_LIMIT).map((f) => f.id),
    overLimit: Math.max(0, fused.length - CANDIDATE_LIMIT),
  };
}

export function refsOf(
  keys: readonly string[],
): { kind: ReturnType<typeof parseCandidateKey>['kind']; namespace: string; id: string }[] {
  return keys.map(parseCandidateKey);
}

export function signalContext(plan: CompilePlan, requestedScopes: readonly string[]): SignalContext {
  return {
    scopes: requestedScopes,
    asOf: plan.asOf,
    hasQuery: plan.hasQuery,
    identifiers: new Set([
      ...queryIdentifiers(plan.query),
      ...extractIdentifiers(plan.query, 32).map((t) => t.toLowerCase()),
    ]),
  };
}

/** The considered candidates that were read, scored and sorted best first. */
export function scoreUnion(
  lists: RankLists,
  selection: UnionSelection,
  pool: CandidatePool,
  plan: CompilePlan,
  signals: SignalContext,
): Scored[] {
  const readable = new Map<string, { id: string; score: number | null }[]>();
  for (const [name, list] of lists)
    readable.set(
      name,
      list.filter((r) => pool.has(r.id)),
    );
  const fused = new Map<string, FusedCandidate>(
    fuse(readable, plan.weights, plan.settings.rrfK).map((f) => [f.id, f]),
  );
  const read = [...new Set(selection.considered)].flatMap((key) => {
    const candidate = pool.get(key);
    return candidate ? [{ key, candidate }] : [];
  });
  // The label and own-terms bonuses weigh the query's words among the candidates scored together.
  const text = plan.hasQuery
    ? textSignals(
        plan.query,
        read.map((r) => r.candidate),
      )
    : [];
  const scored: Scored[] = read.map((r, i) =>
    scoreCandidate(r.candidate, fused.get(r.key) ?? null, signals, text[i]),
  );
  return newerFirst(scored, signals.identifiers).sort(compareScored);
}
