/**
 * The context compiler: one request → one ContextPack, explained item by item and persisted as
 * a trace. The pipeline:
 *
 * 1. plan: the strategy's channels and weights (strategies.ts);
 * 2. phase 1, stage A: query channels (vector, lexical, exact) concurrently, each ≤ 64
 *    candidates through its index; their chunks are read back (phase 2) so the top hits can
 *    seed stage B and carry a distance for the recall floor;
 * 3. phase 1, stage B: facts, graph and recent concurrently, seeded by the anchors, the subject
 *    and the top hits' entities;
 * 4. hard filters before any score (in every channel's SQL and again in phase 2): namespace,
 *    visibility, facts ACTIVE at asOf, relevance scopes; EVIDENCE_LOST and the like are BLOCKED;
 * 5. the union (≤ 256) is fused (weighted RRF) and scored (bonuses), every term kept;
 * 6. recall floor (maxDistance) → BELOW_RELEVANCE_FLOOR;
 * 7. packing: CURRENT first, then greedy by score, conflict versions together, duplicates once;
 * 8. multi-hop expansion when budget remains (one lexical pass, no embedding call);
 * 9. the trace: channels, one decision per candidate, the request without ephemeral content.
 *
 * A channel that fails or times out degrades the pack (a warning), never the call.
 */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { maskPii } from '../domain/pii.js';
import { isVisibilityScope } from '../domain/scopes.js';
import { estimateTokens } from '../domain/tokens.js';
import type { Embedder } from '../providers/embedder.js';
import { exactChannel } from '../retrieval/channels/exact.js';
import { CHANNEL_LIMIT, factsChannel, factsNamingEntities } from '../retrieval/channels/facts.js';
import { type ChunkFilter, NO_FILTERS } from '../retrieval/channels/filters.js';
import { graphChannel } from '../retrieval/channels/graph.js';
import { lexicalChannel } from '../retrieval/channels/lexical.js';
import { recentChannel } from '../retrieval/channels/recent.js';
import { vectorChannel } from '../retrieval/channels/vector.js';
import { type FusedCandidate, fuse } from '../retrieval/fusion.js';
import { extractIdentifiers } from '../retrieval/identifiers.js';
import { ChannelRunner, withTimeout } from '../retrieval/channel-runner.js';
import { resolveSettings } from '../retrieval/settings.js';
import type { RouteValue } from '../router/route-value.js';
import type { FactRow } from '../store/fact-store.js';
import { insertTraces } from '../store/trace-store.js';
import {
  type BlockedCandidate,
  type Candidate,
  type CandidateKind,
  type CandidateRef,
  type SectionKind,
  type SourceRefValue,
  candidateKey,
  dedupKey,
  parseCandidateKey,
} from './candidates.js';
import {
  type HydrateContext,
  type Hydrated,
  hydrateChunks,
  hydrateEntities,
  hydrateFacts,
  hydrateObservations,
} from './hydrate.js';
import { type PackEntry, type PackOutcome, Packer } from './packing.js';
import { detectEntityNames } from './multi-hop.js';
import { ephemeralText, itemLabel, pieceCost, renderItem, renderPack } from './render.js';
import {
  type ScoreSignals,
  type Scored,
  compareScored,
  queryIdentifiers,
  scoreCandidate,
} from './signals.js';
import { type CompilerChannel, type ContextStrategy, planFor } from './strategies.js';

/** Union of candidates scored in phase 2. */
export const CANDIDATE_LIMIT = 256;
/** Multi-hop bounds: entities detected, items per entity, one hop. */
export const MULTI_HOP_MAX_ENTITIES = 2;
export const MULTI_HOP_MAX_PER_ENTITY = 5;
/** Weight of the multi-hop list in RRF (it is a second, weaker pass). */
export const MULTI_HOP_WEIGHT = 0.5;

export interface CompileRequest {
  namespaces: string[];
  query: string;
  scopes: string[];
  anchors: string[];
  subject: { type: string; id: string } | null;
  /** The caller's current state; rendered as CURRENT, never stored. */
  ephemeralContext: unknown;
  budgetTokens: number;
  strategy: ContextStrategy;
  asOf: Date | null;
  k: number;
  maxDistance: number | null;
  /** Per-request RRF weight overrides (unset channels keep the strategy's). */
  weights?: Partial<Record<CompilerChannel, number>> | null;
  /**
   * Time window (AUTO's TEMPORAL route): chunks whose occurred_at (else created_at) lies in
   * [since, until); only the query channels run, so every item comes from inside the window.
   */
  window?: { since: Date | null; until: Date | null } | null;
  /** AUTO: the routing decision, stored with the trace. */
  route?: Record<string, unknown> | null;
}

export interface CompilePrincipal {
  id: string;
  /** Visibility scopes; null = unrestricted. */
  scopes: string[] | null;
  /** May see personal data unmasked. */
  pii: boolean;
}

export interface CompileDeps {
  db: Queryable;
  embedder: Embedder;
  principal: CompilePrincipal;
  charsPerToken: number;
  /** Traces older than this are pruned (when `pruneDue()` says so). */
  traceRetentionDays: number;
  /** Called once per compilation: whether this write should also prune old traces. */
  pruneDue: () => boolean;
  /** A channel (embedding call included) slower than this is abandoned with a warning. */
  channelTimeoutMs: number;
  /** Masks personal data in item text for principals without the pii right. */
  mask?: (text: string) => string;
  now?: () => Date;
  onChannelError?: (channel: string, error: unknown) => void;
}

export interface ChannelRankValue {
  channel: string;
  rank: number;
  score: number | null;
}

export interface PackedItem {
  kind: CandidateKind | 'current';
  /** Relay id of the fact, chunk, observation or entity (`current` for the CURRENT item). */
  id: string;
  namespace: string | null;
  text: string;
  title: string | null;
  sourcePath: string | null;
  score: number;
  signals: ScoreSignals;
  tokenEstimate: number;
  conflict: boolean;
}

export interface PackSectionValue {
  kind: SectionKind;
  items: PackedItem[];
}

export interface DroppedValue {
  id: string;
  reason: string;
  tokenEstimate: number;
}

export interface ContextPackValue {
  query: string;
  sections: PackSectionValue[];
  sources: (SourceRefValue & { namespace: string })[];
  tokenEstimate: number;
  budget: { maxTokens: number; used: number; truncated: boolean; dropped: DroppedValue[] };
  conflicts: string[];
  warnings: string[];
  emptyReason: string | null;
  traceId: string;
  text: string;
  /** strategy AUTO: how the query was routed (see src/router); absent otherwise. */
  route?: RouteValue | null;
  /** strategy AUTO: facts about the entities involved that held before and no longer do. */
  invalidatedFacts?: FactRow[];
}

export type Decision = 'INCLUDED' | 'EXCLUDED' | 'BLOCKED';

/** One line of the trace: what happened to one candidate, and why. */
export interface TraceDecision {
  id: string;
  kind: CandidateKind | 'current';
  namespace: string | null;
  localId: string | null;
  decision: Decision;
  reason: string | null;
  score: number | null;
  signals: ScoreSignals | null;
  section: SectionKind | null;
  tokenEstimate: number | null;
  distance: number | null;
  conflict: boolean;
  expansion: 'MULTI_HOP_EXPANSION' | null;
  duplicateOf: string | null;
}

export type { ChannelReport } from '../retrieval/channel-runner.js';

const ZERO_SIGNALS: ScoreSignals = {
  rrf: 0,
  channels: [],
  exactId: 0,
  scope: 0,
  current: 0,
  evidence: 0,
  freshness: 0,
};

export function newTraceId(): string {
  return `ctx-${randomBytes(12).toString('hex')}`;
}

export async function compileContext(req: CompileRequest, deps: CompileDeps): Promise<ContextPackValue> {
  const now = deps.now?.() ?? new Date();
  const asOf = req.asOf ?? now;
  const traceId = newTraceId();
  const vis = deps.principal.scopes;
  const settings = resolveSettings({ embedderModel: deps.embedder.model });
  const plan = planFor(req.strategy, settings.vector.weight, req.query);
  for (const [channel, w] of Object.entries(req.weights ?? {})) {
    if (typeof w === 'number') plan.weights[channel as CompilerChannel] = w;
  }
  const weights: Record<string, number> = { ...plan.weights, multi_hop: MULTI_HOP_WEIGHT };
  if (req.window)
    plan.channels = plan.channels.filter((c) => c === 'vector' || c === 'lexical' || c === 'exact');
  const runner = new ChannelRunner({ timeoutMs: deps.channelTimeoutMs, onError: deps.onChannelError });
  const on = (c: CompilerChannel) => plan.channels.includes(c);
  const query = plan.usesQuery ? req.query : '';
  const hasQuery = query.trim().length > 0;
  const perChannel = Math.min(CHANNEL_LIMIT, Math.max(20, req.k * Math.max(2, req.namespaces.length)));
  const filter: ChunkFilter = {
    ...NO_FILTERS,
    namespaces: req.namespaces,
    visibleScopes: vis,
    since: req.window?.since ?? null,
    until: req.window?.until ?? null,
  };
  const scopes = req.scopes.length > 0 ? req.scopes : null;

  // ---------------------------------------------------------------- stage A: query channels
  // One embedding call, shared by the vector channel and the recall floor's distances.
  const needVector = hasQuery && (on('vector') || req.maxDistance !== null);
  let embeddingError: unknown = null;
  const embedding: Promise<number[] | null> = needVector
    ? withTimeout(
        deps.embedder.embed([query]).then((v) => v[0] ?? null),
        deps.channelTimeoutMs,
      ).catch((error: unknown) => {
        embeddingError = error;
        return null;
      })
    : Promise.resolve(null);
  // Channel lists in rank order, by candidate key (with the channel's raw score).
  const lists = new Map<string, { id: string; score: number | null }[]>();
  const listOf = (refs: CandidateRef[]) => refs.map((r) => ({ id: candidateKey(r), score: r.score ?? null }));
  const [vectorRefs, lexicalRefs, exactRefs] = await Promise.all([
    on('vector')
      ? runner.run('vector', plan.weights.vector, async () => {
          const e = await embedding;
          // The vector channel fails (or times out) the way its embedding call did.
          if (!e) throw embeddingError ?? new Error('query embedding unavailable');
          const hits = await vectorChannel(deps.db, {
            filter,
            embedding: e,
            limit: perChannel,
            efSearch: Math.max(settings.vector.efSearch, perChannel),
          });
          return hits.map(
            (h): CandidateRef => ({
              kind: 'chunk',
              namespace: h.namespace,
              id: String(h.chunkId),
              score: h.score,
              distance: h.score === null ? null : 1 - h.score,
            }),
          );
        })
      : [],
    on('lexical')
      ? runner.run('lexical', plan.weights.lexical, async () =>
          (
            await lexicalChannel(deps.db, {
              filter,
              query,
              limit: perChannel,
              k1: settings.lexical.k1,
              b: settings.lexical.b,
              maxTerms: settings.lexical.maxTerms,
              prefilter: null,
            })
          ).map(
            (h): CandidateRef => ({
              kind: 'chunk',
              namespace: h.namespace,
              id: String(h.chunkId),
              score: h.score,
            }),
          ),
        )
      : [],
    on('exact')
      ? runner.run('exact', plan.weights.exact, async () =>
          (
            await exactChannel(deps.db, {
              filter,
              tokens: extractIdentifiers(query, settings.exact.maxTokens),
              limit: perChannel,
            })
          ).map(
            (h): CandidateRef => ({
              kind: 'chunk',
              namespace: h.namespace,
              id: String(h.chunkId),
              score: h.score,
            }),
          ),
        )
      : [],
  ]);
  if (on('vector')) lists.set('vector', listOf(vectorRefs));
  if (on('lexical')) lists.set('lexical', listOf(lexicalRefs));
  if (on('exact')) lists.set('exact', listOf(exactRefs));
  const queryVector = await embedding;
  if (needVector && !queryVector && !runner.has('vector')) {
    runner.recordFailure('embedding', 0, embeddingError, { message: 'query embedding unavailable' });
  }
  const hctx: HydrateContext = {
    asOf,
    queryVector: queryVector ? `[${queryVector.join(',')}]` : null,
    visibleScopes: vis,
    scopes,
  };

  const hydrated = new Map<string, Candidate>();
  const blocked = new Map<string, BlockedCandidate>();
  const absorb = (h: Hydrated) => {
    for (const c of h.candidates) hydrated.set(c.key, c);
    for (const b of h.blocked) blocked.set(b.key, b);
  };
  const stageA = uniqueRefs([...vectorRefs, ...lexicalRefs, ...exactRefs]);
  absorb(await hydrateChunks(deps.db, stageA.map(pair), hctx));

  // Top hits (by a first fusion of stage A) seed the graph and facts channels; a hit below the
  // recall floor seeds nothing.
  const floorOk = (c: Candidate | undefined) =>
    c !== undefined &&
    (req.maxDistance === null || !hctx.queryVector || c.distance === null || c.distance <= req.maxDistance);
  const topHitKeys: { namespace: string; key: string }[] = [];
  for (const f of fuse(lists, weights, settings.rrfK)) {
    if (topHitKeys.length >= settings.graph.seeds) break;
    const c = hydrated.get(f.id);
    if (!floorOk(c) || !c || c.entityKeys.length === 0) continue;
    topHitKeys.push({ namespace: c.namespace, key: c.entityKeys[0]! });
  }
  const requested = requestedEntityKeys(req);
  const anchorSeeds = req.namespaces.flatMap((ns) => requested.map((key) => ({ namespace: ns, key })));

  // ---------------------------------------------------------------- stage B: structure channels
  const [factHits, graphHits, recentHits] = await Promise.all([
    on('facts')
      ? runner.run('facts', plan.weights.facts, () =>
          factsChannel(
            deps.db,
            {
              namespaces: req.namespaces,
              seeds: [
                ...anchorSeeds.map((s) => ({ ...s, priority: 0 })),
                ...topHitKeys.map((s) => ({ ...s, priority: 1 })),
              ],
              scopes,
              asOf,
              limit: perChannel,
              perSeed: Math.max(
                4,
                Math.ceil(perChannel / Math.max(1, anchorSeeds.length + topHitKeys.length)),
              ),
              freshestWithoutSeeds: req.strategy === 'BRIEFING' || req.strategy === 'GRAPH',
            },
            vis,
          ),
        )
      : [],
    on('graph')
      ? runner.run('graph', plan.weights.graph, async () => {
          const neighbours = await graphChannel(deps.db, {
            seeds: [...anchorSeeds, ...topHitKeys],
            namespaces: req.namespaces,
            visibleScopes: vis,
            hops: req.strategy === 'HYBRID' ? 1 : 2,
            maxNodes: settings.graph.maxNodes,
            maxEdgesPerNode: settings.graph.maxEdgesPerNode,
            asOf,
          });
          // The anchors themselves lead the list: standing context starts with them.
          return [
            ...anchorSeeds.map((s): CandidateRef => ({ kind: 'entity', namespace: s.namespace, id: s.key })),
            ...neighbours.map(
              (n): CandidateRef => ({
                kind: 'entity',
                namespace: n.namespace,
                id: n.key,
                score: n.support,
              }),
            ),
          ];
        })
      : [],
    on('recent')
      ? runner.run('recent', plan.weights.recent, () =>
          recentChannel(deps.db, { namespaces: req.namespaces, scopes, asOf, limit: perChannel }, vis),
        )
      : [],
  ]);
  const factRefs = factHits.map(
    (h): CandidateRef => ({ kind: 'fact', namespace: h.namespace, id: h.factId }),
  );
  const recentRefs = recentHits.map(
    (h): CandidateRef => ({ kind: h.kind, namespace: h.namespace, id: h.id }),
  );
  if (on('facts')) lists.set('facts', listOf(factRefs));
  if (on('graph')) lists.set('graph', listOf(graphHits));
  if (on('recent')) lists.set('recent', listOf(recentRefs));

  // ---------------------------------------------------------------- phase 2 over the union
  // Fuse references first so that only the best CANDIDATE_LIMIT are read back; candidates
  // beyond it are counted, not traced.
  const fusedRefs = fuse(lists, weights, settings.rrfK);
  const considered = fusedRefs.slice(0, CANDIDATE_LIMIT);
  const overLimit = Math.max(0, fusedRefs.length - CANDIDATE_LIMIT);
  const missing = considered
    .map((f) => parseCandidateKey(f.id))
    .filter((r) => !hydrated.has(candidateKey(r)));
  const byKind = (kind: CandidateKind) => missing.filter((r) => r.kind === kind).map(pair);
  const phase2 = await Promise.all([
    hydrateChunks(deps.db, byKind('chunk'), hctx),
    hydrateFacts(deps.db, byKind('fact'), hctx),
    hydrateObservations(deps.db, byKind('observation'), hctx),
    hydrateEntities(deps.db, byKind('entity'), hctx),
  ]);
  for (const h of phase2) absorb(h);
  const factReport = runner.report('facts');
  if (factReport) factReport.blocked = [...blocked.values()].filter((b) => b.kind === 'fact').length;

  // Hard filters happened above: blocked and unreadable candidates never reach fusion.
  const scoreLists = new Map<string, { id: string; score: number | null }[]>();
  for (const [name, list] of lists)
    scoreLists.set(
      name,
      list.filter((r) => hydrated.has(r.id)),
    );
  const fused = new Map<string, FusedCandidate>(
    fuse(scoreLists, weights, settings.rrfK).map((f) => [f.id, f]),
  );
  const identifiers = new Set([
    ...queryIdentifiers(query),
    ...extractIdentifiers(query, 32).map((t) => t.toLowerCase()),
  ]);
  const sctx = { scopes: req.scopes, asOf, identifiers };
  const consideredKeys = new Set(considered.map((f) => f.id));
  const scored: Scored[] = [];
  for (const key of consideredKeys) {
    const c = hydrated.get(key);
    if (c) scored.push(scoreCandidate(c, fused.get(key) ?? null, sctx));
  }
  scored.sort(compareScored);

  // Personal data is masked for principals without the pii right before costs are measured:
  // the GraphQL layer masks again, and a placeholder may be longer than what it replaces.
  const mask = deps.mask ?? (deps.principal.pii ? (t: string) => t : maskPii);
  const entryOf = (s: Scored): PackEntry & { item: PackedItem } => {
    const c = s.candidate;
    const text = mask(c.text);
    const title = c.title === null ? null : mask(c.title);
    const block = renderItem({
      kind: c.kind,
      label: itemLabel([title, c.sourcePath, c.kind === 'chunk' ? c.entityKeys[0] : c.localId]),
      text,
    });
    const cost = pieceCost(block, deps.charsPerToken);
    return {
      key: c.key,
      section: c.section,
      block,
      cost,
      dedupKey: dedupKey(c.text),
      item: {
        kind: c.kind,
        id: c.globalId,
        namespace: c.namespace,
        text,
        title,
        sourcePath: c.sourcePath,
        score: s.score,
        signals: s.signals,
        tokenEstimate: cost,
        conflict: c.conflict,
      },
    };
  };

  // ---------------------------------------------------------------- recall floor
  const decisions = new Map<string, TraceDecision>();
  const floorOn = req.maxDistance !== null && hctx.queryVector !== null;
  const byKey = new Map(scored.map((s) => [s.candidate.key, s]));
  const groups = conflictGroups(scored, byKey);
  const passes = new Set<string>();
  for (const s of scored) {
    if (!floorOn || s.candidate.distance === null || s.candidate.distance <= (req.maxDistance as number)) {
      passes.add(s.candidate.key);
    }
  }
  // A conflict is never silently resolved: when one version passes, every version is served.
  for (const members of groups.values()) {
    if (members.some((m) => passes.has(m.candidate.key)))
      for (const m of members) passes.add(m.candidate.key);
  }
  let floorExcluded = 0;
  for (const s of scored) {
    if (passes.has(s.candidate.key)) continue;
    floorExcluded += 1;
    decisions.set(s.candidate.key, {
      ...decisionOf(s, 'EXCLUDED', 'BELOW_RELEVANCE_FLOOR'),
      tokenEstimate: entryOf(s).cost,
    });
  }

  // ---------------------------------------------------------------- packing
  const packer = new Packer(req.budgetTokens, deps.charsPerToken);
  const items = new Map<string, PackedItem>();
  const ephemeral = mask(ephemeralText(req.ephemeralContext));
  let currentOutcome: ReturnType<Packer['packCurrent']> | null = null;
  if (ephemeral.length > 0) {
    currentOutcome = packer.packCurrent(ephemeral);
    if (currentOutcome.included) {
      items.set('current', {
        kind: 'current',
        id: 'current',
        namespace: null,
        text: currentOutcome.text,
        title: 'Current state',
        sourcePath: null,
        score: 0,
        signals: ZERO_SIGNALS,
        tokenEstimate: currentOutcome.cost,
        conflict: false,
      });
    }
  }

  const applyOutcomes = (
    outcomes: PackOutcome[],
    entries: Map<string, PackEntry & { item: PackedItem }>,
    expansion: boolean,
  ) => {
    for (const o of outcomes) {
      const s = byKey.get(o.key)!;
      const e = entries.get(o.key)!;
      if (o.status === 'INCLUDED') {
        items.set(o.key, e.item);
        decisions.set(o.key, {
          ...decisionOf(s, 'INCLUDED', expansion ? 'MULTI_HOP_EXPANSION' : null, expansion),
          tokenEstimate: e.cost,
        });
      } else if (o.reason === 'OVER_BUDGET') {
        decisions.set(o.key, {
          ...decisionOf(s, 'EXCLUDED', 'OVER_BUDGET', expansion),
          tokenEstimate: e.cost,
        });
      } else {
        const dup = byKey.get(o.duplicateOf);
        decisions.set(o.key, {
          ...decisionOf(s, 'EXCLUDED', 'DUPLICATE', expansion),
          tokenEstimate: e.cost,
          duplicateOf: dup?.candidate.globalId ?? null,
        });
      }
    }
  };

  const offerAll = (list: Scored[], expansion: boolean) => {
    const entries = new Map(list.map((s) => [s.candidate.key, entryOf(s)]));
    const offered = new Set<string>();
    for (const s of list) {
      if (offered.has(s.candidate.key)) continue;
      const group = groups.get(s.candidate.key) ?? [s];
      const members = group.filter((m) => entries.has(m.candidate.key) && !offered.has(m.candidate.key));
      for (const m of members) offered.add(m.candidate.key);
      applyOutcomes(packer.offer(members.map((m) => entries.get(m.candidate.key)!)), entries, expansion);
    }
  };
  offerAll(
    scored.filter((s) => passes.has(s.candidate.key)),
    false,
  );

  // ---------------------------------------------------------------- multi-hop expansion
  const overBudget = [...decisions.values()].some((d) => d.reason === 'OVER_BUDGET');
  const packedMemory = [...items.values()].filter((i) => i.kind !== 'current');
  if (!overBudget && packer.remaining > 0 && packedMemory.length > 0) {
    const names = detectEntityNames(
      packedMemory.map((i) => i.text),
      query,
      MULTI_HOP_MAX_ENTITIES,
    );
    if (names.length > 0) {
      const expansion = await runner.run('multi_hop', MULTI_HOP_WEIGHT, async () => {
        const perName = await Promise.all([
          ...names.map(async (name) =>
            (
              await lexicalChannel(deps.db, {
                filter,
                query: name,
                limit: MULTI_HOP_MAX_PER_ENTITY,
                k1: settings.lexical.k1,
                b: settings.lexical.b,
                maxTerms: settings.lexical.maxTerms,
                prefilter: null,
              })
            ).map(
              (h): CandidateRef => ({
                kind: 'chunk',
                namespace: h.namespace,
                id: String(h.chunkId),
                score: h.score,
              }),
            ),
          ),
          factsNamingEntities(
            deps.db,
            { namespaces: req.namespaces, names, perName: MULTI_HOP_MAX_PER_ENTITY, asOf, scopes },
            vis,
          ).then((hits) =>
            hits.map((h): CandidateRef => ({ kind: 'fact', namespace: h.namespace, id: h.factId })),
          ),
        ]);
        return uniqueRefs(perName.flat()).filter(
          (r) => !decisions.has(candidateKey(r)) && !items.has(candidateKey(r)),
        );
      });
      const fresh = expansion.filter((r) => !hydrated.has(candidateKey(r)));
      const more = await Promise.all([
        hydrateChunks(deps.db, fresh.filter((r) => r.kind === 'chunk').map(pair), hctx),
        hydrateFacts(deps.db, fresh.filter((r) => r.kind === 'fact').map(pair), hctx),
      ]);
      for (const h of more) absorb(h);
      const hopKeys = expansion.map((r) => candidateKey(r)).filter((k) => hydrated.has(k) && !byKey.has(k));
      const hopFused = new Map(fuse({ multi_hop: hopKeys }, weights, settings.rrfK).map((f) => [f.id, f]));
      const hopScored = hopKeys
        .map((k) => scoreCandidate(hydrated.get(k)!, hopFused.get(k) ?? null, sctx))
        .sort(compareScored);
      for (const s of hopScored) byKey.set(s.candidate.key, s);
      // Multi-hop rows are never gated by the floor: bringing back distant evidence is their point.
      offerAll(hopScored, true);
    }
  }

  // ---------------------------------------------------------------- blocked
  for (const b of blocked.values()) {
    if (decisions.has(b.key)) continue;
    decisions.set(b.key, {
      id: b.globalId,
      kind: b.kind,
      namespace: b.namespace,
      localId: parseCandidateKey(b.key).id,
      decision: 'BLOCKED',
      reason: b.reason,
      score: null,
      signals: null,
      section: null,
      tokenEstimate: null,
      distance: null,
      conflict: false,
      expansion: null,
      duplicateOf: null,
    });
  }
  // ---------------------------------------------------------------- the pack
  const sections: PackSectionValue[] = packer
    .sectionKeys()
    .map(({ kind, keys }) => ({ kind, items: keys.map((k) => items.get(k)!).filter(Boolean) }));
  const text = renderPack(packer.rendered());
  const tokenEstimate = estimateTokens(text, deps.charsPerToken);
  if (tokenEstimate > req.budgetTokens) {
    // Impossible by construction (see render.ts); refuse to hand out an oversized pack.
    throw new Error(`packed text (${tokenEstimate}) exceeds the budget (${req.budgetTokens})`);
  }
  const sources = new Map<string, SourceRefValue & { namespace: string }>();
  for (const key of packer.sectionKeys().flatMap((s) => s.keys)) {
    const c = hydrated.get(key);
    if (c?.source) {
      const k = `${c.namespace}\u0000${c.source.key}`;
      if (!sources.has(k))
        sources.set(k, { namespace: c.namespace, ...c.source, title: mask(c.source.title) });
    }
  }
  const conflictFacts = scored.filter((s) => s.candidate.kind === 'fact' && s.candidate.conflict);
  const conflicts = [...new Set(conflictFacts.map((s) => s.candidate.localId))].sort();
  const lost = [...blocked.values()].filter((b) => b.reason === 'EVIDENCE_LOST').length;

  const warnings: string[] = [];
  if (conflicts.length > 0) {
    warnings.push(
      `open_conflict: ${conflicts.length} fact(s) in open conflict; every version is served with conflict: true`,
    );
  }
  if (lost > 0)
    warnings.push(`evidence_lost: ${lost} fact(s) hidden because their evidence was redacted or purged`);
  warnings.push(...runner.warnings('the pack'));
  if (currentOutcome?.truncated) {
    warnings.push(
      currentOutcome.included
        ? 'current_truncated: the ephemeral context was cut to fit the budget'
        : 'current_dropped: the ephemeral context does not fit the budget',
    );
  }

  const droppedValues: DroppedValue[] = [];
  if (currentOutcome && !currentOutcome.included) {
    droppedValues.push({ id: 'current', reason: 'OVER_BUDGET', tokenEstimate: currentOutcome.fullCost });
  }
  for (const d of decisions.values()) {
    if (d.reason === 'OVER_BUDGET' || d.reason === 'BELOW_RELEVANCE_FLOOR') {
      droppedValues.push({ id: d.id, reason: d.reason, tokenEstimate: d.tokenEstimate ?? 0 });
    }
  }
  const memoryItems = sections.filter((s) => s.kind !== 'CURRENT').reduce((n, s) => n + s.items.length, 0);
  const emptyReason = memoryItems === 0 && floorExcluded > 0 && !overBudget ? 'no_relevant_memory' : null;

  // ---------------------------------------------------------------- the trace
  const currentDecision: TraceDecision | null = currentOutcome
    ? {
        id: 'current',
        kind: 'current',
        namespace: null,
        localId: null,
        decision: currentOutcome.included ? 'INCLUDED' : 'EXCLUDED',
        reason: currentOutcome.included ? (currentOutcome.truncated ? 'TRUNCATED' : null) : 'OVER_BUDGET',
        score: null,
        signals: null,
        section: 'CURRENT',
        tokenEstimate: currentOutcome.included ? currentOutcome.cost : currentOutcome.fullCost,
        distance: null,
        conflict: false,
        expansion: null,
        duplicateOf: null,
      }
    : null;
  const channels = Object.fromEntries(runner.reports());
  const request = {
    namespaces: req.namespaces,
    query: req.query,
    scopes: req.scopes,
    anchors: req.anchors,
    subject: req.subject,
    strategy: req.strategy,
    budgetTokens: req.budgetTokens,
    asOf: req.asOf?.toISOString() ?? null,
    k: req.k,
    maxDistance: req.maxDistance,
    ...(req.window
      ? {
          window: {
            since: req.window.since?.toISOString() ?? null,
            until: req.window.until?.toISOString() ?? null,
          },
        }
      : {}),
    ...(req.route ? { route: req.route } : {}),
    // Only the size of the caller's state: its content is never stored.
    ephemeralContext: {
      present: req.ephemeralContext !== null && req.ephemeralContext !== undefined,
      chars: ephemeral.length,
      tokens: estimateTokens(ephemeral, deps.charsPerToken),
    },
    result: {
      items: memoryItems,
      tokenEstimate,
      used: packer.used,
      truncated: Boolean(currentOutcome?.truncated),
      emptyReason,
      warnings,
      // Candidates beyond CANDIDATE_LIMIT are counted, not traced.
      candidatesOverLimit: overLimit,
    },
  };
  const all = [...decisions.values()];
  const rows = req.namespaces.map((ns) => {
    const mine = all.filter((d) => d.namespace === ns);
    return {
      namespace: ns,
      traceId,
      kind: 'context',
      principalId: deps.principal.id,
      request,
      channels,
      decisions: [...(currentDecision ? [currentDecision] : []), ...mine],
      visibility: traceVisibility(mine, hydrated, blocked),
    };
  });
  try {
    await insertTraces(deps.db, rows, deps.pruneDue() ? deps.traceRetentionDays : null);
  } catch (error) {
    deps.onChannelError?.('trace', error);
    warnings.push('trace_not_saved: the trace of this pack could not be stored');
  }

  return {
    query: req.query,
    sections,
    sources: [...sources.values()],
    tokenEstimate,
    budget: {
      maxTokens: req.budgetTokens,
      used: packer.used,
      truncated: Boolean(currentOutcome?.truncated),
      dropped: droppedValues,
    },
    conflicts,
    warnings,
    emptyReason,
    traceId,
    text,
  };
}

// ------------------------------------------------------------------ helpers

function pair(r: { namespace: string; id: string }): { namespace: string; id: string } {
  return { namespace: r.namespace, id: r.id };
}

function uniqueRefs(refs: CandidateRef[]): CandidateRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = candidateKey(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Anchors and the subject as entity keys (`type:id` and the bare id for a subject). */
export function requestedEntityKeys(req: Pick<CompileRequest, 'anchors' | 'subject'>): string[] {
  const keys = [...req.anchors];
  if (req.subject) keys.push(`${req.subject.type}:${req.subject.id}`, req.subject.id);
  return [...new Set(keys)];
}

function decisionOf(s: Scored, decision: Decision, reason: string | null, expansion = false): TraceDecision {
  const c = s.candidate;
  return {
    id: c.globalId,
    kind: c.kind,
    namespace: c.namespace,
    localId: c.localId,
    decision,
    reason,
    score: s.score,
    signals: s.signals,
    section: c.section,
    tokenEstimate: null,
    distance: c.distance,
    conflict: c.conflict,
    expansion: expansion ? 'MULTI_HOP_EXPANSION' : null,
    duplicateOf: null,
  };
}

function candidateKeyOfDecision(d: TraceDecision): string {
  return candidateKey({ kind: d.kind as CandidateKind, namespace: d.namespace ?? '', id: d.localId ?? '' });
}

/**
 * Conflict groups among the scored facts: every version of an open conflict, keyed by each
 * member. Versions outside the scored set (filtered, invisible) are not part of the group.
 */
function conflictGroups(scored: Scored[], byKey: Map<string, Scored>): Map<string, Scored[]> {
  const parent = new Map<string, string>();
  const find = (k: string): string => {
    let r = k;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(k, r);
    return r;
  };
  const facts = scored.filter((s) => s.candidate.kind === 'fact' && s.candidate.conflict);
  for (const s of facts) parent.set(s.candidate.key, s.candidate.key);
  for (const s of facts) {
    for (const other of s.candidate.conflictsWith) {
      const ok = candidateKey({ kind: 'fact', namespace: s.candidate.namespace, id: other });
      if (!parent.has(ok) || !byKey.has(ok)) continue;
      parent.set(find(ok), find(s.candidate.key));
    }
  }
  const byRoot = new Map<string, Scored[]>();
  for (const s of facts) {
    const r = find(s.candidate.key);
    byRoot.set(r, [...(byRoot.get(r) ?? []), s]);
  }
  const out = new Map<string, Scored[]>();
  for (const members of byRoot.values()) {
    if (members.length < 2) continue;
    members.sort(compareScored);
    for (const m of members) out.set(m.candidate.key, members);
  }
  return out;
}

/** Visibility scopes of the items a trace names: its reader must hold all of them. */
function traceVisibility(
  decisions: TraceDecision[],
  hydrated: Map<string, Candidate>,
  blocked: Map<string, BlockedCandidate>,
): string[] {
  const out = new Set<string>();
  for (const d of decisions) {
    const key = candidateKeyOfDecision(d);
    for (const s of hydrated.get(key)?.scopes ?? blocked.get(key)?.scopes ?? []) {
      if (isVisibilityScope(s)) out.add(s);
    }
  }
  return [...out].sort();
}
