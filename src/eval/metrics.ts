/**
 * Retrieval metrics of the LoCoMo harness. A question's evidence is a set of turns; a
 * ranking is the list of turns a search returned, best first.
 *
 * - recall@k: the share of the evidence turns found among the first k (evidence ids that are
 *   not turns of the conversation count as not found);
 * - MRR: 1 / rank of the first evidence turn found (0 when none is in the ranking).
 */

export const RECALL_KS = [5, 10, 20] as const;

export interface QuestionScore {
  recall: Record<(typeof RECALL_KS)[number], number>;
  reciprocalRank: number;
  /** Evidence among the first `coverageAt` of the ranking: some of it, all of it. */
  covered: { any: boolean; all: boolean };
}

/** Search results are judged at 10 for coverage; a pack by everything it holds. */
export const SEARCH_COVERAGE_AT = 10;

export function scoreRanking(
  ranking: readonly string[],
  evidence: readonly string[],
  coverageAt: number = SEARCH_COVERAGE_AT,
): QuestionScore {
  const wanted = new Set(evidence);
  const firstAt = new Map<string, number>();
  ranking.forEach((id, i) => {
    if (!firstAt.has(id)) firstAt.set(id, i);
  });
  const positions = [...wanted].map((e) => firstAt.get(e)).filter((p): p is number => p !== undefined);
  const recallAt = (k: number) =>
    wanted.size === 0 ? 0 : positions.filter((p) => p < k).length / wanted.size;
  const best = positions.length ? Math.min(...positions) : Number.POSITIVE_INFINITY;
  return {
    recall: { 5: recallAt(5), 10: recallAt(10), 20: recallAt(20) },
    reciprocalRank: Number.isFinite(best) ? 1 / (best + 1) : 0,
    covered: {
      any: positions.some((p) => p < coverageAt),
      all: wanted.size > 0 && positions.filter((p) => p < coverageAt).length === wanted.size,
    },
  };
}

export interface Aggregate {
  questions: number;
  recall: Record<(typeof RECALL_KS)[number], number>;
  mrr: number;
  /** Share of questions with some / all of their evidence covered (see QuestionScore.covered). */
  coverage: { any: number; all: number };
}

export function aggregate(scores: readonly QuestionScore[]): Aggregate {
  const n = scores.length;
  const mean = (f: (s: QuestionScore) => number) => (n === 0 ? 0 : scores.reduce((a, s) => a + f(s), 0) / n);
  return {
    questions: n,
    recall: { 5: mean((s) => s.recall[5]), 10: mean((s) => s.recall[10]), 20: mean((s) => s.recall[20]) },
    mrr: mean((s) => s.reciprocalRank),
    coverage: { any: mean((s) => (s.covered.any ? 1 : 0)), all: mean((s) => (s.covered.all ? 1 : 0)) },
  };
}

/**
 * LoCoMo evidence as written in the data: mostly `D3:7`, sometimes several in one string
 * (`D8:6; D9:17`) or misspelt (`D:11:26`). Returns the distinct dia ids; an entry that names
 * no turn at all (`D`) is kept as written, so it counts as evidence that cannot be found.
 */
export function parseEvidence(evidence: unknown): string[] {
  if (!Array.isArray(evidence)) return [];
  const ids = new Set<string>();
  for (const item of evidence) {
    if (typeof item !== 'string') continue;
    const found = [...item.matchAll(/D\s*:?\s*(\d+)\s*:\s*(\d+)/gi)];
    if (found.length === 0 && item.trim() !== '') ids.add(item.trim());
    for (const m of found) ids.add(`D${Number(m[1])}:${Number(m[2])}`);
  }
  return [...ids];
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}
