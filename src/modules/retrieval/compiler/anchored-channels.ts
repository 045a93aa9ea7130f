/**
 * Stage 4, anchored channels: facts, graph and recent concurrently, seeded by the anchors, the
 * subject and the entities of the query channels' top hits (by a first fusion; a hit below the
 * recall floor seeds nothing).
 */
import type { Queryable } from '../../../db/database.js';
import type { ChannelRunner } from '../pipeline/channel-runner.js';
import { factsChannel } from '../pipeline/channels/facts.js';
import { graphChannel } from '../pipeline/channels/graph.js';
import { recentChannel } from '../pipeline/channels/recent.js';
import { fuse } from '../pipeline/fusion.js';
import type { CandidatePool } from './candidate-pool.js';
import { type Candidate, type CandidateRef, candidateKey } from './candidates.js';
import type { CompileRequest } from './pack-types.js';
import { type CompilePlan, runs } from './plan.js';
import { type RankLists, rankListOf } from './rank-lists.js';

export interface EntitySeed {
  namespace: string;
  key: string;
}

/** Anchors and the subject as entity keys (`type:id` and the bare id for a subject). */
export function requestedEntityKeys(req: Pick<CompileRequest, 'anchors' | 'subject'>): string[] {
  const keys = [...req.anchors];
  if (req.subject) keys.push(`${req.subject.type}:${req.subject.id}`, req.subject.id);
  return [...new Set(keys)];
}

/** Whether a candidate passes the recall floor (always, without a floor or a distance). */
export function passesFloor(c: Candidate, maxDistance: number | null, hasQueryVector: boolean): boolean {
  return maxDistance === null || !hasQueryVector || c.distance === null || c.distance <= maxDistance;
}

/** The first entity of each of the best-fused hydrated hits, at most `max`. */
export function topHitSeeds(
  lists: RankLists,
  plan: CompilePlan,
  pool: CandidatePool,
  maxDistance: number | null,
  max: number,
): EntitySeed[] {
  const seeds: EntitySeed[] = [];
  const hasVector = pool.context.queryVector !== null;
  for (const f of fuse(lists, plan.weights, plan.settings.rrfK)) {
    if (seeds.length >= max) break;
    const c = pool.get(f.id);
    if (!c || !passesFloor(c, maxDistance, hasVector) || c.entityKeys.length === 0) continue;
    seeds.push({ namespace: c.namespace, key: c.entityKeys[0]! });
  }
  return seeds;
}

/**
 * The same seeds straight from the query channels' hits, before any is read: exact when no
 * hit can fail a later check — no recall floor and no relevance scopes requested (visibility
 * is already in every channel's SQL) — so the hits are read once, with everything else.
 */
export function topHitSeedsFromRefs(
  lists: RankLists,
  plan: CompilePlan,
  refs: readonly CandidateRef[],
  max: number,
): EntitySeed[] {
  const byKey = new Map(refs.map((r) => [candidateKey(r), r]));
  const seeds: EntitySeed[] = [];
  for (const f of fuse(lists, plan.weights, plan.settings.rrfK)) {
    if (seeds.length >= max) break;
    const ref = byKey.get(f.id);
    if (!ref?.nodeKey) continue;
    seeds.push({ namespace: ref.namespace, key: ref.nodeKey });
  }
  return seeds;
}

/** Whether seeds may come from the hits before they are read (see topHitSeedsFromRefs). */
export function seedsWithoutReading(req: Pick<CompileRequest, 'maxDistance' | 'scopes'>): boolean {
  return req.maxDistance === null && req.scopes.length === 0;
}

export async function runAnchoredChannels(
  req: CompileRequest,
  plan: CompilePlan,
  db: Queryable,
  runner: ChannelRunner,
  seeds: { anchors: EntitySeed[]; topHits: EntitySeed[] },
): Promise<RankLists> {
  const { anchors, topHits } = seeds;
  const { perChannel, asOf, relevanceScopes: scopes, visibleScopes } = plan;
  const [factHits, graphRefs, recentHits] = await Promise.all([
    runs(plan, 'facts')
      ? runner.run('facts', plan.weights.facts, () =>
          factsChannel(
            db,
            {
              namespaces: req.namespaces,
              seeds: [
                ...anchors.map((s) => ({ ...s, priority: 0 })),
                ...topHits.map((s) => ({ ...s, priority: 1 })),
              ],
              scopes,
              asOf,
              heldAt: plan.heldAt,
              limit: perChannel,
              perSeed: Math.max(4, Math.ceil(perChannel / Math.max(1, anchors.length + topHits.length))),
              freshestWithoutSeeds: req.strategy === 'BRIEFING' || req.strategy === 'GRAPH',
            },
            visibleScopes,
          ),
        )
      : [],
    runs(plan, 'graph')
      ? runner.run('graph', plan.weights.graph, async () => {
          const neighbours = await graphChannel(db, {
            seeds: [...anchors, ...topHits],
            namespaces: req.namespaces,
            visibleScopes,
            hops: req.strategy === 'HYBRID' ? 1 : 2,
            maxNodes: plan.settings.graph.maxNodes,
            maxEdgesPerNode: plan.settings.graph.maxEdgesPerNode,
            asOf,
            heldAt: plan.heldAt,
          });
          // The anchors themselves lead the list: standing context starts with them.
          return [
            ...anchors.map((s): CandidateRef => ({ kind: 'entity', namespace: s.namespace, id: s.key })),
            ...neighbours.map(
              (n): CandidateRef => ({ kind: 'entity', namespace: n.namespace, id: n.key, score: n.support }),
            ),
          ];
        })
      : [],
    runs(plan, 'recent')
      ? runner.run('recent', plan.weights.recent, () =>
          recentChannel(db, { namespaces: req.namespaces, scopes, asOf, limit: perChannel }, visibleScopes),
        )
      : [],
  ]);
  const lists: RankLists = new Map();
  if (runs(plan, 'facts'))
    lists.set(
      'facts',
      rankListOf(factHits.map((h) => ({ kind: 'fact', namespace: h.namespace, id: h.factId }))),
    );
  if (runs(plan, 'graph')) lists.set('graph', rankListOf(graphRefs));
  if (runs(plan, 'recent'))
    lists.set(
      'recent',
      rankListOf(recentHits.map((h) => ({ kind: h.kind, namespace: h.namespace, id: h.id }))),
    );
  return lists;
}
