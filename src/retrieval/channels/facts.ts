/**
 * The `facts` channel: temporal facts around seed entities (anchors, the subject, the entities
 * of the top hits), valid at `asOf`. One bounded statement through the (namespace, subject|object,
 * valid_from) indexes; hard filters in SQL, before anything is scored:
 *
 * - namespace predicate and `visibleTo` on the fact and on both of its endpoints;
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
import type { Queryable } from '../../db/database.js';
import { factHeldAt, factVisibleTo } from '../../store/visibility.js';

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
  /** What memory held at this instant (see store/visibility.ts, factHeldAt); null = now. */
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

/**
 * Relevance scopes: an item is relevant when its relevance scopes (scopes that are not
 * visibility scopes) intersect `param`, or when it has none. `param` NULL disables the filter.
 */
export function relevantTo(alias: string, param: string): string {
  return `(${param}::text[] IS NULL OR ${alias}.scopes && ${param}::text[]
    OR NOT EXISTS (SELECT 1 FROM unnest(${alias}.scopes) AS rs(s) WHERE NOT (rs.s = ANY(${alias}.visibility))))`;
}

/** Valid at `param` and served or blocked-for-reporting (never RETRACTED). */
const liveAt = (param: string) => `f.status IN ('ACTIVE', 'SUPERSEDED', 'EVIDENCE_LOST')
  AND f.valid_from <= ${param}::timestamptz AND (f.valid_to IS NULL OR f.valid_to > ${param}::timestamptz)`;

export async function factsChannel(
  q: Queryable,
  input: FactsChannelInput,
  visibleScopes: string[] | null,
): Promise<FactsChannelHit[]> {
  const seeds = dedupeSeeds(input.seeds);
  const limit = Math.min(CHANNEL_LIMIT, Math.max(1, input.limit));
  if (seeds.length === 0 && !input.freshestWithoutSeeds) return [];
  const filters = `${liveAt('$4')} AND ${factHeldAt('f', '$11')} AND ${factVisibleTo('f', '$5')}
    AND ${relevantTo('f', '$6')}`;
  const { rows } = await q.query<FactsChannelHit>(
    `/* contextFactsChannel */
     WITH seeds AS (
       SELECT s.ns, s.key, s.prio FROM unnest($1::text[], $2::text[], $3::int[]) AS s(ns, key, prio)
     ), around AS (
       SELECT x.namespace, x.fact_id, x.status, x.valid_from, x.conflicts_with, s.prio
       FROM seeds s
       CROSS JOIN LATERAL (
         (SELECT f.namespace, f.fact_id, f.status, f.valid_from, f.conflicts_with FROM facts f
          WHERE f.namespace = s.ns AND f.subject = s.key AND ${filters}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT $7)
         UNION ALL
         (SELECT f.namespace, f.fact_id, f.status, f.valid_from, f.conflicts_with FROM facts f
          WHERE f.namespace = s.ns AND f.object = s.key AND f.subject <> s.key AND ${filters}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT $7)
       ) x
     ), freshest AS (
       SELECT x.namespace, x.fact_id, x.status, x.valid_from, x.conflicts_with, 3 AS prio
       FROM unnest($9::text[]) AS n(ns)
       CROSS JOIN LATERAL (
         SELECT f.namespace, f.fact_id, f.status, f.valid_from, f.conflicts_with FROM facts f
         WHERE $10::boolean AND f.namespace = n.ns AND ${filters}
         ORDER BY f.recorded_at DESC LIMIT $8
       ) x
     ), found AS (
       SELECT DISTINCT ON (a.namespace, a.fact_id) a.*
       FROM (SELECT * FROM around UNION ALL SELECT * FROM freshest) a
       ORDER BY a.namespace, a.fact_id, a.prio
     ), ranked AS (
       SELECT found.*, row_number() OVER (ORDER BY prio, valid_from DESC, fact_id) AS pos
       FROM found ORDER BY prio, valid_from DESC, fact_id LIMIT $8
     ), partners AS (
       SELECT DISTINCT ON (f.namespace, f.fact_id) f.namespace, f.fact_id, f.status,
              $8::int + row_number() OVER (ORDER BY f.namespace, f.fact_id) AS pos
       FROM ranked r
       JOIN facts f ON f.namespace = r.namespace AND f.fact_id = ANY(r.conflicts_with)
       WHERE r.status <> 'EVIDENCE_LOST' AND f.status <> 'EVIDENCE_LOST' AND ${filters}
         AND NOT EXISTS (SELECT 1 FROM ranked r2 WHERE r2.namespace = f.namespace AND r2.fact_id = f.fact_id)
     )
     SELECT namespace, fact_id AS "factId", status = 'EVIDENCE_LOST' AS blocked, false AS "conflictPartner", pos
     FROM ranked
     UNION ALL
     SELECT namespace, fact_id, false, true, pos FROM partners
     ORDER BY pos`,
    [
      seeds.map((s) => s.namespace),
      seeds.map((s) => s.key),
      seeds.map((s) => s.priority),
      input.asOf,
      visibleScopes,
      input.scopes,
      Math.max(1, input.perSeed),
      limit,
      seeds.length === 0 ? input.namespaces : [],
      seeds.length === 0 && input.freshestWithoutSeeds,
      input.heldAt ?? null,
    ],
  );
  return rows.map((r) => ({
    namespace: r.namespace,
    factId: r.factId,
    blocked: r.blocked,
    conflictPartner: r.conflictPartner,
  }));
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
