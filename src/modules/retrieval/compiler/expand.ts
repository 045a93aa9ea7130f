/**
 * Stage 7, expand (multi-hop): when the pack has room left and nothing was dropped for the
 * budget, the entity names its items mention (rules, no model call) are looked up once more —
 * a lexical pass per name and the facts around entities so named, read back as candidates in
 * the same statement — and what is new is offered after the first pass. Multi-hop rows are never gated by the recall floor: bringing
 * back distant evidence is their point.
 */
import { withoutSummaries } from './summary-items.js';
import type { Queryable } from '../../../db/database.js';
import type { CandidateRows } from '../store/candidate-store.js';
import type { ChannelRunner } from '../pipeline/channel-runner.js';
import { multiHopChannel } from '../pipeline/channels/multi-hop.js';
import { fuse } from '../pipeline/fusion.js';
import type { CandidatePool } from './candidate-pool.js';
import { type CandidateRef, candidateKey } from './candidates.js';
import { detectEntityNames } from './multi-hop.js';
import type { PackBuilder } from './pack-builder.js';
import { type CompilePlan, MULTI_HOP_WEIGHT } from './plan.js';
import { uniqueRefs } from './rank-lists.js';
import { type SignalContext, compareScored, scoreCandidate } from './signals.js';

/** Multi-hop bounds: entities detected, items per entity, one hop. */
export const MULTI_HOP_MAX_ENTITIES = 2;
export const MULTI_HOP_MAX_PER_ENTITY = 5;

/** The entity names to expand on, or none when the pack is full or empty. */
export function expansionNames(builder: PackBuilder, query: string): string[] {
  const packedMemory = [...builder.items.values()].filter((i) => i.kind !== 'current');
  if (builder.overBudget() || builder.packer.remaining <= 0 || packedMemory.length === 0) return [];
  return detectEntityNames(
    packedMemory.map((i) => i.text),
    query,
    MULTI_HOP_MAX_ENTITIES,
  );
}

export async function expandMultiHop(
  plan: CompilePlan,
  db: Queryable,
  runner: ChannelRunner,
  pool: CandidatePool,
  builder: PackBuilder,
  signals: SignalContext,
): Promise<void> {
  const names = expansionNames(builder, plan.query);
  if (names.length === 0) return;
  const { settings } = plan;
  // The statement reads every hit back too; the pool keeps the rows of hits it had not read.
  const read: { rows?: CandidateRows } = {};
  const found = await runner.run('multi_hop', MULTI_HOP_WEIGHT, async () => {
    const out = await multiHopChannel(
      db,
      {
        filter: plan.filter,
        names,
        perName: MULTI_HOP_MAX_PER_ENTITY,
        lexical: { k1: settings.lexical.k1, b: settings.lexical.b, maxTerms: settings.lexical.maxTerms },
        asOf: plan.asOf,
        scopes: plan.relevanceScopes,
      },
      plan.visibleScopes,
      pool.context,
    );
    read.rows = out.candidates;
    return uniqueRefs(out.hits.map((h): CandidateRef => ({ ...h }))).filter(
      (r) => !builder.decisions.has(candidateKey(r)) && !builder.items.has(candidateKey(r)),
    );
  });
  if (read.rows) pool.ingest(found, read.rows);
  const hopKeys = found.map((r) => candidateKey(r)).filter((k) => pool.has(k) && !builder.scored.has(k));
  const hopFused = new Map(fuse({ multi_hop: hopKeys }, plan.weights, settings.rrfK).map((f) => [f.id, f]));
  const hopScored = hopKeys
    .map((k) => scoreCandidate(pool.get(k)!, hopFused.get(k) ?? null, signals))
    .sort(compareScored);
  builder.offer(withoutSummaries(hopScored), true);
}
