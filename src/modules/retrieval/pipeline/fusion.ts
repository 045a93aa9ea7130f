/**
 * Weighted Reciprocal Rank Fusion plus the additive tie-break bonuses. RRF only orders
 * candidates — its values are tiny (at most Σweights / 61) and must never be shown as confidence.
 */

import { DEFAULT_RRF_K, DEFAULT_WEIGHTS } from './vocabulary.js';

export { DEFAULT_RRF_K };

/** A channel's hit: its id, and the channel's own raw score when it has one (cosine, ts_rank…). */
export type RankedCandidate = string | { id: string; score?: number | null };

export interface ChannelHit {
  channel: string;
  /** 0-based position in the channel's list. */
  rank: number;
  score: number | null;
}

export interface FusedCandidate {
  id: string;
  rrf: number;
  /** Channels that found the candidate, best rank first (then by channel name). */
  channels: ChannelHit[];
}

export type ChannelLists =
  | ReadonlyMap<string, readonly RankedCandidate[]>
  | Readonly<Record<string, readonly RankedCandidate[]>>;

/**
 * `rrf(d) = Σ_c weight_c / (rrfK + rank_c(d) + 1)` over the channels that list `d`. A channel
 * without an explicit weight uses its default (or 1 when unknown). Within one list only an
 * id's first (best) position counts. Ties break by best rank, then id, so equal inputs always
 * give the same order.
 */
export function fuse(
  lists: ChannelLists,
  weights: Readonly<Record<string, number>> = {},
  rrfK: number = DEFAULT_RRF_K,
): FusedCandidate[] {
  if (!Number.isFinite(rrfK) || rrfK < 0) throw new RangeError(`rrfK must be ≥ 0, got ${rrfK}`);
  const entries: Array<[string, readonly RankedCandidate[]]> =
    lists instanceof Map ? [...lists.entries()] : Object.entries(lists);
  // Summing channels in name order keeps floating-point results independent of input order.
  entries.sort(([a], [b]) => compareStrings(a, b));
  const byId = new Map<string, { rrf: number; channels: ChannelHit[] }>();
  for (const [channel, list] of entries) {
    const weight = weights[channel] ?? (DEFAULT_WEIGHTS as Readonly<Record<string, number>>)[channel] ?? 1;
    if (!Number.isFinite(weight) || weight < 0) throw new RangeError(`weight of ${channel} must be ≥ 0`);
    const seen = new Set<string>();
    list.forEach((candidate, rank) => {
      const id = typeof candidate === 'string' ? candidate : candidate.id;
      if (seen.has(id)) return;
      seen.add(id);
      const score = typeof candidate === 'string' ? null : (candidate.score ?? null);
      const entry = byId.get(id) ?? { rrf: 0, channels: [] };
      entry.rrf += weight / (rrfK + rank + 1);
      entry.channels.push({ channel, rank, score });
      byId.set(id, entry);
    });
  }
  const fused: FusedCandidate[] = [...byId.entries()].map(([id, entry]) => ({
    id,
    rrf: entry.rrf,
    channels: entry.channels.sort((a, b) => a.rank - b.rank || compareStrings(a.channel, b.channel)),
  }));
  return fused.sort((a, b) => b.rrf - a.rrf || bestRank(a) - bestRank(b) || compareStrings(a.id, b.id));
}

function bestRank(candidate: FusedCandidate): number {
  return candidate.channels[0]?.rank ?? Number.POSITIVE_INFINITY;
}

// Code-unit order, not locale order: the same everywhere.
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The smallest gap at the top of one channel's list: 1/(k+1) − 1/(k+2) at RRF k 60 (≈ 0.000264). */
const TOP_RANK_STEP = 1 / (DEFAULT_RRF_K + 1) - 1 / (DEFAULT_RRF_K + 2);

export const BONUS = {
  exactId: 0.01,
  namedEntity: 0.004,
  scopeMatch: 0.004,
  currentFact: 0.003,
  perEvidenceRank: 0.002,
  freshnessMax: 0.005,
  /**
   * Freshness when the read has a query: half of the smallest step between two ranks of a
   * channel's list (1/(k+63) − 1/(k+64) ≈ 0.000065 at k 60 and 64 candidates), so age orders
   * only items relevance ties. At the full 0.005 the last session's turns outranked the best
   * matches (LoCoMo dev, context R@10 0.714 against search's 0.773; both halves).
   */
  freshnessMaxWithQuery: 0.00003,
  freshnessHalfLifeDays: 14,
  /**
   * The item's title or heading holds a word of the query (see text-signals.ts): one rank step
   * at the top, so it settles near-ties only. LoCoMo dev, with `ownTermsMax`: MRR 0.529 → 0.548,
   * no measure worse on either half; at 2 steps R@5 and R@10 fell on one (sweep in eval/results).
   */
  labelMatch: TOP_RANK_STEP,
  /** At most two rank steps for the share of the query's distinctive words the own text holds. */
  ownTermsMax: 2 * TOP_RANK_STEP,
  /**
   * Taken from an item whose own text ends with a question: two rank steps, as much as own
   * terms can give. LoCoMo dev MRR 0.548 → 0.575, R@10 0.775 → 0.783, every measure up on both
   * halves; at 3 steps R@5 fell on one half (sweep in eval/results).
   */
  askingPenalty: 2 * TOP_RANK_STEP,
} as const;

export interface BonusInput {
  /** The item matches an identifier written in the query (error code, SHA, key…). */
  exactId?: boolean;
  /**
   * The item is linked (actor, subject or a mention in its text) to an entity the query names
   * by title, alias or key — the gazetteer of entity linking, asked of the query.
   */
  namedEntity?: boolean;
  /** The item carries one of the explicitly requested scopes. */
  scopeMatch?: boolean;
  /** A fact whose interval is still open. */
  currentFact?: boolean;
  /** 0–3, see domain/evidence.ts. */
  evidenceRank?: number;
  /** Age of the item in days; null/undefined when it has no meaningful time. */
  ageDays?: number | null;
  /** The read has a query: freshness only breaks ties of relevance (freshnessMaxWithQuery). */
  withQuery?: boolean;
}

/** Every bonus term separately (they are returned to callers as `signals`) and their sum. */
export interface ScoreBonuses {
  exactId: number;
  namedEntity: number;
  scopeMatch: number;
  currentFact: number;
  evidence: number;
  freshness: number;
  total: number;
}

/**
 * Additive bonuses that break RRF ties: exact identifier +0.010, an entity the query names
 * +0.004, requested scope +0.004, current fact +0.003, +0.002 per evidence rank, freshness
 * 0.005 × 0.5^(ageDays / 14) (0.00003 × … with a query; future timestamps count as age 0).
 */
export function scoreBonuses(input: BonusInput): ScoreBonuses {
  const exactId = input.exactId ? BONUS.exactId : 0;
  const namedEntity = input.namedEntity ? BONUS.namedEntity : 0;
  const scopeMatch = input.scopeMatch ? BONUS.scopeMatch : 0;
  const currentFact = input.currentFact ? BONUS.currentFact : 0;
  const rank = input.evidenceRank ?? 0;
  const evidence = Number.isFinite(rank) && rank > 0 ? BONUS.perEvidenceRank * rank : 0;
  const age = input.ageDays;
  const freshness =
    age == null || Number.isNaN(age)
      ? 0
      : (input.withQuery ? BONUS.freshnessMaxWithQuery : BONUS.freshnessMax) *
        0.5 ** (Math.max(0, age) / BONUS.freshnessHalfLifeDays);
  return {
    exactId,
    namedEntity,
    scopeMatch,
    currentFact,
    evidence,
    freshness,
    total: exactId + namedEntity + scopeMatch + currentFact + evidence + freshness,
  };
}
