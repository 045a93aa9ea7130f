/**
 * The context compiler: one request → one ContextPack, explained item by item. The pipeline,
 * one stage per module:
 *
 *   plan → query channels → hydrate → anchored channels (facts, graph, recent) and the current
 *        state (with the named entities' summaries) → score → pack (recall floor, budget)
 *        → expand (multi-hop) → assemble → trace
 *
 * Hard filters come before any score, in every channel's SQL and again on hydration:
 * namespace, visibility, facts ACTIVE at asOf, relevance scopes (EVIDENCE_LOST and the like
 * are BLOCKED). A channel that fails or times out degrades the pack (a warning), never the call.
 * `compilePack` leaves the trace as a draft so that a caller that post-processes the pack (the
 * AUTO route) writes it from what it serves; `compileContext` serves the pack as compiled.
 */
import { maskPii } from '../../../domain/pii.js';
import { StageTrace } from '../../../observability/retrieval.js';
import { ChannelRunner } from '../pipeline/channel-runner.js';
import {
  requestedEntityKeys,
  runAnchoredChannels,
  seedsWithoutReading,
  topHitSeeds,
  topHitSeedsFromRefs,
} from './anchored-channels.js';
import { assemblePack } from './assemble.js';
import { CandidatePool } from './candidate-pool.js';
import { PackBuilder } from './pack-builder.js';
import type { CompileDeps, CompileRequest, ContextPackValue } from './pack-types.js';
import { planCompilation } from './plan.js';
import { type StateRows, currentStateItems, readCurrentState } from './current-state.js';
import type { Scored } from './signals.js';
import { explainEmptyPack } from './empty-pack.js';
import { runQueryChannels } from './query-channels.js';
import { expandMultiHop } from './expand.js';
import { ephemeralText, pieceCost } from './render.js';
import { summaryItems, withoutSummaries } from './summary-items.js';
import { refsOf, scoreUnion, selectUnion, signalContext } from './score.js';
import { type TraceDraft, newTraceId, tracedRequest, writeTrace } from './trace.js';

export type {
  ChannelRankValue,
  CompileDeps,
  CompilePrincipal,
  CompileRequest,
  ContextPackValue,
  DroppedValue,
  PackedItem,
  PackSectionValue,
} from './pack-types.js';
export type { Decision, TraceDecision } from './trace.js';
export type { ChannelReport } from '../pipeline/channel-runner.js';
export { CANDIDATE_LIMIT } from './score.js';
export { MULTI_HOP_MAX_ENTITIES, MULTI_HOP_MAX_PER_ENTITY } from './expand.js';
export { MULTI_HOP_WEIGHT } from './plan.js';
export { newTraceId, requestedEntityKeys };

export interface CompiledPack {
  pack: ContextPackValue;
  /** Written by the caller, last, from the pack it serves (see writeTrace). */
  trace: TraceDraft;
}

export async function compilePack(req: CompileRequest, deps: CompileDeps): Promise<CompiledPack> {
  const stages = new StageTrace();
  stages.begin('plan');
  const visibleScopes = deps.principal.scopes;
  const plan = planCompilation(req, {
    embedderModel: deps.embedder.model,
    visibleScopes,
    now: deps.now?.() ?? new Date(),
  });
  const runner = new ChannelRunner({
    timeoutMs: deps.channelTimeoutMs,
    onError: deps.onChannelError,
    pipeline: 'context',
    parentSpan: () => stages.current(),
  });

  const queried = await stages.run('query_channels', () =>
    runQueryChannels(plan, deps, runner, req.maxDistance !== null),
  );
  const pool = new CandidatePool(deps.db, {
    asOf: plan.asOf,
    heldAt: plan.heldAt,
    queryVector: queried.queryVector ? `[${queried.queryVector.join(',')}]` : null,
    visibleScopes,
    scopes: plan.relevanceScopes,
    query: plan.hasQuery ? plan.query : null,
  });
  // The hits seed the anchored channels; they are read before those run only when a floor or
  // relevance scopes may reject some. Else the seeds come from the hits' references and the hits
  // are read with the anchored channels' candidates, once: reading them while the anchored
  // channels run would take a second statement (planned, executed, its rows parsed) to save
  // little wall time, and under load statements are what the gateway and the database lack.
  const seedsFromHits = seedsWithoutReading(req);
  if (!seedsFromHits) await stages.run('hydrate_hits', () => pool.hydrate(queried.refs));
  const seeds = plan.settings.graph.seeds;
  const requested = requestedEntityKeys(req);
  stages.begin('anchored_channels');
  const [anchored, state] = await Promise.all([
    runAnchoredChannels(req, plan, deps.db, runner, {
      anchors: req.namespaces.flatMap((namespace) => requested.map((key) => ({ namespace, key }))),
      topHits: seedsFromHits
        ? topHitSeedsFromRefs(queried.lists, plan, queried.refs, seeds)
        : topHitSeeds(queried.lists, plan, pool, req.maxDistance, seeds),
    }),
    readCurrentState(req, plan, deps, runner, requested),
  ]);
  const lists = new Map([...queried.lists, ...anchored]);

  const selection = selectUnion(lists, plan);
  await stages.run('hydrate', () => pool.hydrate([...queried.refs, ...refsOf(selection.considered)]));
  const factReport = runner.report('facts');
  if (factReport) factReport.blocked = [...pool.blocked.values()].filter((b) => b.kind === 'fact').length;
  stages.begin('score');
  const signals = signalContext(plan, req.scopes);
  const scored = withoutSummaries(scoreUnion(lists, selection, pool, plan, signals));

  stages.begin('pack');
  const mask = deps.mask ?? (deps.principal.pii ? (t: string) => t : maskPii);
  const builder = new PackBuilder(req.budgetTokens, deps.charsPerToken, mask);
  const ephemeral = mask(ephemeralText(req.ephemeralContext));
  const floor = pool.context.queryVector !== null ? req.maxDistance : null;
  const offerAnswers = async () => {
    builder.offer(builder.applyFloor(scored, floor), false);
    await stages.run('expand', () => expandMultiHop(plan, deps.db, runner, pool, builder, signals));
  };
  const budget = { cost: (t: string) => pieceCost(t, deps.charsPerToken), tokens: req.budgetTokens };
  const leading = await packLeading(builder, ephemeral, state, plan.query, offerAnswers, budget);
  stages.begin('assemble');

  const traceId = newTraceId();
  const assembled = assemblePack(req, {
    traceId,
    charsPerToken: deps.charsPerToken,
    mask,
    runner,
    pool,
    builder,
    scored: [...leading, ...scored],
  });
  await explainEmptyPack(assembled.pack, deps.db, req.namespaces, visibleScopes);
  stages.end();
  return {
    pack: assembled.pack,
    trace: {
      traceId,
      principalId: deps.principal.id,
      namespaces: req.namespaces,
      request: tracedRequest(req, ephemeral, deps.charsPerToken),
      channels: Object.fromEntries(runner.reports()),
      current: assembled.current,
      decisions: assembled.decisions,
      candidatesOverLimit: selection.overLimit,
    },
  };
}

/**
 * The pack's parts in the order they claim the budget: the caller's CURRENT state, what holds now
 * for the named entities (CURRENT_STATE), the ranked items and their multi-hop expansion
 * (`offerAnswers`), and last the named entities' summaries (SUMMARIES: an overview, in what
 * budget the answers leave). Sections are rendered in their fixed order whatever the order they
 * were filled in. Returns the leading and summary items offered.
 */
async function packLeading(
  builder: PackBuilder,
  ephemeral: string,
  state: StateRows,
  query: string,
  offerAnswers: () => Promise<void>,
  budget: { cost: (text: string) => number; tokens: number },
): Promise<Scored[]> {
  builder.packCurrent(ephemeral);
  const stateItems = currentStateItems(state, query);
  builder.offerState(stateItems);
  await offerAnswers();
  // A summary a channel already brought (packed or not) is not offered twice.
  const summaries = summaryItems(state, query, budget.cost, budget.tokens).filter(
    (s) => !builder.decisions.has(s.candidate.key) && !builder.items.has(s.candidate.key),
  );
  builder.offerState(summaries);
  return [...stateItems, ...summaries];
}

/** Compiles and serves the pack as compiled, its trace written last. */
export async function compileContext(req: CompileRequest, deps: CompileDeps): Promise<ContextPackValue> {
  const { pack, trace } = await compilePack(req, deps);
  const stages = new StageTrace();
  const served = await stages.run('trace', () =>
    writeTrace(deps.db, trace, pack, {
      prune: { namespaces: deps.pruneDue(req.namespaces), olderThanDays: deps.traceRetentionDays },
      onError: deps.onChannelError,
    }),
  );
  stages.end();
  return served;
}
