/** Channel lists in rank order, by candidate key, with each channel's raw score: fusion's input. */
import { type CandidateRef, candidateKey } from './candidates.js';

export type RankList = { id: string; score: number | null }[];
export type RankLists = Map<string, RankList>;

export function rankListOf(refs: readonly CandidateRef[]): RankList {
  return refs.map((r) => ({ id: candidateKey(r), score: r.score ?? null }));
}

export function uniqueRefs(refs: readonly CandidateRef[]): CandidateRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = candidateKey(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
