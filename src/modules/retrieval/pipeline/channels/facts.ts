/**
 * The `facts` channel: temporal facts around seed entities (anchors, the subject, the entities
 * of the top hits), valid at `asOf`. One bounded statement through the (namespace, subject|object,
 * valid_from) indexes (store/anchored-channel-store.ts); hard filters in SQL, before anything
 * is scored:
 *
 * - namespace predicate and `factVisible` on the fact and on both of its endpoints;
 * - served facts are ACTIVE at `asOf`: status ACTIVE, or SUPERSEDED for an instant before the
 *   successor took over (a superseded fact's closed `valid_to` records exactly when it was
 *   active), with `valid_from ≤ asOf < valid_to`; RETRACTED facts never come back;
 * - EVIDENCE_LOST facts that would have matched come back flagged `blocked` (so the compiler
 *   can warn and trace them) and are never scored;
 * - relevance scopes: facts whose relevance scopes intersect the requested ones, plus unscoped.
 *
 * The other side of an open conflict is added after the ranked facts, so both versions reach
 * the compiler together.
 */
import type { Queryable } from '../../../../db/database.js';
import { factsAroundSeeds } from '../../store/anchored-channel-store.js';

/** Phase-1 bound of every channel. */
export const CHANNEL_LIMIT = 64;

export interface FactSeed {
  namespace: string;
  key: string;
  /** 0 = anchor or subject (asked for), 1 = entity of a top hit, 2 = multi-hop. */
  priority: number;
}

export interface FactsChannelInput {
  namespaces: string[];
  seeds: FactSeed[];
  /** Requested relevance scopes; null = no relevance filter. */
  scopes: string[] | null;
  asOf: Date;
  /** What memory held at this instant (see store/visibility.ts, factHeld); null = now. */
  heldAt?: Date | null;
  /** At most CHANNEL_LIMIT. */
  limit: number;
  /** Facts per seed and side (subject/object). */
  perSeed: number;
  /** Without seeds: the freshest facts in the scopes (BRIEFING's standing context). */
  freshestWithoutSeeds: boolean;
}

export interface FactsChannelHit {
  namespace: string;
  factId: string;
  /** EVIDENCE_LOST: reported and traced, never scored. */
  blocked: boolean;
  /** True for the other side of a conflict, added after the ranked facts. */
  conflictPartner: boolean;
}

export async function factsChannel(
  q: Queryable,
  input: FactsChannelInput,
  visibleScopes: string[] | null,
): Promise<FactsChannelHit[]> {
  const seeds = dedupeSeeds(input.seeds);
  const limit = Math.min(CHANNEL_LIMIT, Math.max(1, input.limit));
  if (seeds.length === 0 && !input.freshestWithoutSeeds) return [];
  return factsAroundSeeds(
    q,
    {
      seeds,
      asOf: input.asOf,
      heldAt: input.heldAt ?? null,
      scopes: input.scopes,
      perSeed: input.perSeed,
      limit,
      freshestIn: seeds.length === 0 && input.freshestWithoutSeeds ? input.namespaces : [],
    },
    visibleScopes,
  );
}

function dedupeSeeds(seeds: readonly FactSeed[]): FactSeed[] {
  const best = new Map<string, FactSeed>();
  for (const s of seeds) {
    const k = `${s.namespace}\u0000${s.key}`;
    const cur = best.get(k);
    if (!cur || s.priority < cur.priority) best.set(k, s);
  }
  return [...best.values()];
}
