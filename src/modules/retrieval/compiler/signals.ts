/**
 * Scoring of the union: weighted RRF (the search module's `fuse`) plus the additive tie-break
 * bonuses (`scoreBonuses`), every term kept so that the pack explains itself.
 */
import { type ChannelHit, type FusedCandidate, scoreBonuses } from '../pipeline/fusion.js';
import { isIdentifierLike } from '../pipeline/identifiers.js';
import { NO_TEXT_SIGNALS, type TextSignals } from '../pipeline/text-signals.js';
import type { Candidate } from './candidates.js';

export interface ScoreSignals {
  rrf: number;
  channels: ChannelHit[];
  exactId: number;
  /** The entity-name bonus: the item is linked to an entity the query names. */
  entity: number;
  /** Keys of the entities the query names that the item is linked to. */
  entities: string[];
  scope: number;
  current: number;
  evidence: number;
  freshness: number;
  /** The label bonus: the item's title or heading holds a word of the query (text-signals.ts). */
  label: number;
  /** The own-terms bonus: the share of the query's distinctive words the item's own text holds. */
  terms: number;
  /** Negative when the item's own text ends with a question (text-signals.ts); 0 otherwise. */
  asking: number;
  /** Score moved by newer-first ordering on one topic (see newer-first.ts); 0 elsewhere. */
  newer: number;
  /**
   * The leading section's order (current-state.ts): 1 for its first item, a thousandth less for
   * each next; 0 for every item ranked by the channels.
   */
  state: number;
}

/** Every signal at zero: an item no ranking scored (a current-state line, a default). */
export const ZERO_SIGNALS: ScoreSignals = {
  rrf: 0,
  channels: [],
  exactId: 0,
  entity: 0,
  entities: [],
  scope: 0,
  current: 0,
  evidence: 0,
  freshness: 0,
  label: 0,
  terms: 0,
  asking: 0,
  newer: 0,
  state: 0,
};

export interface Scored {
  candidate: Candidate;
  score: number;
  signals: ScoreSignals;
}

export interface SignalContext {
  /** Relevance scopes the caller asked for. */
  scopes: readonly string[];
  /** The instant freshness is measured against (asOf, or now). */
  asOf: Date;
  /** Identifier-like tokens of the query (see queryIdentifiers). */
  identifiers: ReadonlySet<string>;
  /** The read has a query: freshness only breaks ties of relevance. */
  hasQuery?: boolean;
}

const DAY_MS = 86_400_000;

/**
 * Signals and final score of one candidate; `fused` is null for items no channel ranked, `text`
 * its label and own-terms bonuses among the candidates scored with it (none without a query).
 */
export function scoreCandidate(
  candidate: Candidate,
  fused: FusedCandidate | null,
  ctx: SignalContext,
  text: TextSignals = NO_TEXT_SIGNALS,
): Scored {
  const foundExact = fused?.channels.some((c) => c.channel === 'exact') ?? false;
  const namesIdentifier = candidate.identifiers.some((id) => ctx.identifiers.has(id.toLowerCase()));
  const bonuses = scoreBonuses({
    exactId: foundExact || namesIdentifier,
    namedEntity: candidate.namedEntities.length > 0,
    scopeMatch: ctx.scopes.length > 0 && candidate.scopes.some((s) => ctx.scopes.includes(s)),
    currentFact: candidate.kind === 'fact' && candidate.currentFact,
    evidenceRank: candidate.kind === 'fact' ? candidate.evidenceRank : 0,
    ageDays: candidate.time ? (ctx.asOf.getTime() - candidate.time.getTime()) / DAY_MS : null,
    withQuery: ctx.hasQuery === true,
  });
  const rrf = fused?.rrf ?? 0;
  return {
    candidate,
    score: rrf + bonuses.total + text.label + text.terms + text.asking,
    signals: {
      rrf,
      channels: fused?.channels ?? [],
      exactId: bonuses.exactId,
      entity: bonuses.namedEntity,
      entities: candidate.namedEntities,
      scope: bonuses.scopeMatch,
      current: bonuses.currentFact,
      evidence: bonuses.evidence,
      freshness: bonuses.freshness,
      label: text.label,
      terms: text.terms,
      asking: text.asking,
      newer: 0,
      state: 0,
    },
  };
}

/** Highest score first; ties by best channel rank, then key, so equal inputs give equal packs. */
export function compareScored(a: Scored, b: Scored): number {
  return (
    b.score - a.score ||
    bestRank(a) - bestRank(b) ||
    (a.candidate.key < b.candidate.key ? -1 : a.candidate.key > b.candidate.key ? 1 : 0)
  );
}

function bestRank(s: Scored): number {
  return s.signals.channels[0]?.rank ?? Number.POSITIVE_INFINITY;
}

// Tokens of a query as the compiler reads them: words with the separators an identifier holds.
const TOKEN = /[\p{L}\p{N}_./:#@-]+/gu;

/**
 * Identifier-like tokens of a query, lower-cased, surrounding punctuation removed: the same
 * rule as the exact channel's (isIdentifierLike), so a hyphenated word ("dairy-free") is a word
 * here too and does not make newer-first ordering treat it as a thread's identifier.
 */
export function queryIdentifiers(query: string): Set<string> {
  const out = new Set<string>();
  for (const raw of query.normalize('NFKC').match(TOKEN) ?? []) {
    const token = raw.replace(/^[./:#@-]+|[./:#@-]+$/g, '');
    if (token.length >= 4 && isIdentifierLike(token)) out.add(token.toLowerCase());
  }
  return out;
}
