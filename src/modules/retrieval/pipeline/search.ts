import type { Queryable } from '../../../db/database.js';
import type { Embedder } from '../../../providers/embedder.js';
import type { Llm } from '../../../providers/llm.js';
import { type ChunkRow, type HitChunkRow, findHitChunks } from '../../../kernel/store/chunk-store.js';
import { ChannelRunner } from './channel-runner.js';
import { exactChannel } from './channels/exact.js';
import { chunkKey, parseChunkKey } from './candidate-ref.js';
import { type ChunkCandidate, type ChunkFilter, NO_FILTERS } from './channels/filters.js';
import { type GraphNeighbor, graphChannel } from './channels/graph.js';
import { lexicalChannel } from './channels/lexical.js';
import { listingChannel } from './channels/listing.js';
import { vectorChannel } from './channels/vector.js';
import { type ChannelHit, type RankedCandidate, fuse, scoreBonuses } from './fusion.js';
import { extractIdentifiers } from './identifiers.js';
import { applyRerank, rerank } from './rerank.js';
import { textSignals } from './text-signals.js';
import { fusionWeights, type RetrievalSettings } from './settings.js';
import { MODE_CHANNELS, type SearchMode } from './vocabulary.js';

/**
 * One search, start to end: channels (concurrently) → weighted RRF + bonuses → graph
 * neighbours of the top hits → optional LLM rerank. Pure orchestration over the channel
 * functions; the caller (a service) has already validated the request and checked access,
 * and supplies the per-request database, loaders and providers.
 */

export type { SearchMode };

export type SearchFilters = Omit<ChunkFilter, 'namespaces' | 'visibleScopes'>;

export interface SearchRequest {
  namespaces: string[];
  /** Empty (after trimming) = structural listing by the filters, no ranking. */
  query: string;
  k: number;
  mode: SearchMode;
  /** Graph expansion around the top hits: 0–2. */
  hops: number;
  filters?: SearchFilters;
  rerank?: boolean;
  settings: RetrievalSettings;
}

export interface RetrievalContext {
  db: Queryable;
  embedder: Embedder;
  llm: Llm;
  /** The principal's visibility scopes; null = unrestricted. */
  visibleScopes: string[] | null;
  /** Rows in the order of `refs`, null where absent or invisible (the request's DataLoader). */
  loadChunks(refs: { namespace: string; chunkId: number }[]): Promise<(ChunkRow | null)[]>;
  /** Applied to every text sent to a model (PII masking for the principal); identity if absent. */
  maskText?: (text: string) => string;
  /** A channel (embedding call included) slower than this is abandoned with a warning. */
  channelTimeoutMs: number;
  onChannelError?: (channel: string, error: unknown) => void;
}

export interface SearchHitResult {
  chunk: ChunkRow;
  /** Fused score: RRF plus bonuses. For ordering only, never a confidence. */
  score: number;
  rrf: number;
  /** The exact-identifier bonus (+0.010) when the text contains an identifier of the query. */
  exactIdBonus: number;
  /** The entity-name bonus (+0.004) when the hit's observation is linked to an entity the query names. */
  entityBonus: number;
  /** Keys of the entities the query names that the hit's observation is linked to. */
  namedEntities: string[];
  /** The label bonus: the hit's title or heading holds a word of the query (see text-signals.ts). */
  labelBonus: number;
  /** The own-terms bonus: the share of the query's distinctive words the hit's own text holds. */
  termsBonus: number;
  /** Negative (−0.00053) when the hit's own text ends with a question; 0 otherwise. */
  askingPenalty: number;
  /** LLM relevance 0–1 when rerank ran and succeeded; null otherwise. */
  rerankScore: number | null;
  /** Every channel that found the chunk: its 0-based rank and raw score there. */
  channels: ChannelHit[];
}

export interface ChannelStat {
  channel: string;
  candidates: number;
  ms: number;
  /** Set when the channel could not run (the search went on without it). */
  error?: string;
}

export interface RerankReport {
  requested: boolean;
  applied: boolean;
  /** Why the fused order was kept, when rerank was asked for and not applied. */
  reason: string | null;
  ms: number;
}

export interface SearchOutcome {
  hits: SearchHitResult[];
  neighbors: GraphNeighbor[];
  channels: ChannelStat[];
  rerank: RerankReport;
  /** One per channel that failed or timed out: the hits are degraded, the search answered. */
  warnings: string[];
}

/**
 * Candidates each channel returns: filters apply on top of HNSW, so the pool is wider than k,
 * and wider again with more namespaces (they share one index).
 */
export function candidatePool(k: number, namespaceCount: number): number {
  return Math.max(20, k * Math.max(2, namespaceCount));
}

export { MODE_CHANNELS };

export async function search(ctx: RetrievalContext, request: SearchRequest): Promise<SearchOutcome> {
  const s = request.settings;
  const filter: ChunkFilter = {
    ...NO_FILTERS,
    ...request.filters,
    namespaces: request.namespaces,
    visibleScopes: ctx.visibleScopes,
  };
  const query = request.query.trim();
  const runner = new ChannelRunner({
    timeoutMs: ctx.channelTimeoutMs,
    onError: ctx.onChannelError,
    pipeline: 'search',
  });
  const rerankWanted = request.rerank === true;
  const poolSize = rerankWanted ? Math.max(s.rerank.poolSize, request.k) : request.k;

  let ranked: RankedId[];
  if (query === '') {
    const listed = await runner.run('list', 0, () => listingChannel(ctx.db, { filter, limit: request.k }));
    ranked = listed.map((c, rank) => ({
      id: chunkKey(c),
      namespace: c.namespace,
      nodeKey: c.nodeKey,
      rrf: 0,
      score: 0,
      exactIdBonus: 0,
      channels: [{ channel: 'list', rank, score: null }],
    }));
  } else {
    const lists = await runChannels(ctx, request, filter, query, runner);
    ranked = fuseLists(lists, s);
  }

  // The channels already return each chunk's node, so the graph walk and the rows do not wait
  // for each other: they run at once (they overlap on PostgreSQL). The rows come with the
  // entities the query names that each hit's observation is linked to (one statement), read for
  // a channel's worth of candidates so that the bonus can lift one from below the cut.
  const window =
    query === '' ? poolSize : Math.max(poolSize, candidatePool(request.k, request.namespaces.length));
  const head = ranked.slice(0, window);
  const seeds = distinctNodes(head.slice(0, Math.min(request.k, s.graph.seeds)));
  const [rows, neighbors] = await Promise.all([
    findHitChunks(
      ctx.db,
      head.map((r) => parseChunkKey(r.id)),
      // Only observations are linked to entities: without one in the window, no look-up.
      query !== '' && head.some((r) => r.observationText) ? query : null,
      ctx.visibleScopes,
    ),
    s.graph.enabled && request.hops > 0 && seeds.length > 0
      ? runner.run('graph', s.graph.weight, () =>
          graphChannel(ctx.db, {
            seeds,
            namespaces: request.namespaces,
            visibleScopes: ctx.visibleScopes,
            hops: request.hops,
            asOf: request.filters?.asOf ?? null,
            heldAt: request.filters?.asOf ?? null,
            maxNodes: s.graph.maxNodes,
            maxEdgesPerNode: s.graph.maxEdgesPerNode,
            withRows: true,
          }),
        )
      : Promise.resolve([]),
  ]);
  const found = withEntityBonus(
    withTextSignals(
      head
        .map((r, i) => ({ ...r, chunk: rows[i] ?? null }))
        .filter((r): r is RankedId & { chunk: HitChunkRow } => r.chunk !== null),
      query,
    ),
  ).slice(0, poolSize);

  const report: RerankReport = { requested: rerankWanted, applied: false, reason: null, ms: 0 };
  let hits: SearchHitResult[] = found.slice(0, request.k).map((r) => toHit(r, null));
  if (rerankWanted && found.length > 0) {
    if (query === '') report.reason = 'a listing has no query to rerank against';
    else if (!ctx.llm.available) report.reason = 'no language model configured';
    else hits = await rerankHits(ctx, request, found, neighbors, report);
  }
  return {
    hits,
    neighbors,
    channels: channelStats(runner),
    rerank: report,
    warnings: runner.warnings('the result'),
  };
}

interface RankedId {
  id: string;
  namespace: string;
  nodeKey: string;
  rrf: number;
  score: number;
  exactIdBonus: number;
  entityBonus?: number;
  namedEntities?: string[];
  labelBonus?: number;
  termsBonus?: number;
  askingPenalty?: number;
  /** The chunk is an observation's own text (its node is the observation). */
  observationText?: boolean;
  channels: ChannelHit[];
}

/**
 * The entity-name bonus: a hit whose observation is linked to an entity the query names gains
 * it, and the list is sorted again (stable, so equal scores keep the fused order). The links
 * come with the rows of the observations' own texts; every hit of such an observation counts.
 */
function withEntityBonus<T extends RankedId & { chunk: HitChunkRow }>(found: T[]): T[] {
  const named = new Map<string, string[]>();
  for (const r of found) {
    const c = r.chunk;
    if (c.observationId !== null && c.observationId === c.nodeKey && c.namedEntities.length > 0)
      named.set(`${r.namespace}\u0000${c.observationId}`, c.namedEntities);
  }
  if (named.size === 0) return found;
  return found
    .map((r) => {
      const keys = r.chunk.observationId
        ? (named.get(`${r.namespace}\u0000${r.chunk.observationId}`) ?? [])
        : [];
      const entityBonus = scoreBonuses({ namedEntity: keys.length > 0 }).namedEntity;
      return { ...r, score: r.score + entityBonus, entityBonus, namedEntities: keys };
    })
    .sort((a, b) => b.score - a.score);
}

/**
 * The label, own-terms and asking signals, read from the rows already loaded (text-signals.ts); the
 * list is sorted again (stable). A listing has no query: nothing changes.
 */
function withTextSignals<T extends RankedId & { chunk: ChunkRow }>(found: T[], query: string): T[] {
  if (query === '') return found;
  const signals = textSignals(
    query,
    found.map((r) => r.chunk),
  );
  return found
    .map((r, i) => {
      const { label, terms, asking } = signals[i]!;
      return {
        ...r,
        score: r.score + label + terms + asking,
        labelBonus: label,
        termsBonus: terms,
        askingPenalty: asking,
      };
    })
    .sort((a, b) => b.score - a.score);
}

type ChannelLists = Map<string, ChunkCandidate[]>;

async function runChannels(
  ctx: RetrievalContext,
  request: SearchRequest,
  filter: ChunkFilter,
  query: string,
  runner: ChannelRunner,
): Promise<{ lists: ChannelLists; exact: Map<string, number> }> {
  const s = request.settings;
  const weights = fusionWeights(s);
  const pool = candidatePool(request.k, request.namespaces.length);
  const wanted = new Set(MODE_CHANNELS[request.mode]);
  const lists: ChannelLists = new Map();
  const exact = new Map<string, number>();
  const tasks: Promise<void>[] = [];

  if (wanted.has('vector') && s.vector.enabled) {
    tasks.push(
      (async () => {
        // Without its embedding the vector channel does not run; the other channels carry on.
        const [embedding] = await runner.run('embed', 0, () => ctx.embedder.embed([query]));
        if (!embedding) return;
        lists.set(
          'vector',
          await runner.run('vector', weights.vector, () =>
            vectorChannel(ctx.db, {
              filter,
              embedding,
              limit: pool,
              efSearch: Math.max(s.vector.efSearch, pool),
            }),
          ),
        );
      })(),
    );
  }
  if (wanted.has('lexical') && s.lexical.enabled) {
    tasks.push(
      runner
        .run('lexical', weights.lexical, () =>
          lexicalChannel(ctx.db, {
            filter,
            query,
            limit: pool,
            k1: s.lexical.k1,
            b: s.lexical.b,
            maxTerms: s.lexical.maxTerms,
            prefilter: null,
          }),
        )
        .then((found) => {
          lists.set('lexical', found);
        }),
    );
  }
  const identifiers =
    wanted.has('exact') && s.exact.enabled ? extractIdentifiers(query, s.exact.maxTokens) : [];
  if (identifiers.length > 0) {
    tasks.push(
      runner
        .run('exact', weights.exact, () =>
          exactChannel(ctx.db, { filter, tokens: identifiers, limit: pool, fuzzy: s.exact.fuzzy }),
        )
        .then((found) => {
          lists.set('exact', found);
          for (const c of found) if (c.exactMatches > 0) exact.set(chunkKey(c), c.exactMatches);
        }),
    );
  }
  await Promise.all(tasks);
  return { lists, exact };
}

function fuseLists(
  { lists, exact }: { lists: ChannelLists; exact: Map<string, number> },
  s: RetrievalSettings,
): RankedId[] {
  const input = new Map<string, RankedCandidate[]>();
  const nodes = new Map<string, ChunkCandidate>();
  for (const [channel, list] of lists) {
    input.set(
      channel,
      list.map((c) => {
        const id = chunkKey(c);
        nodes.set(id, c);
        return { id, score: c.score };
      }),
    );
  }
  const fused = fuse(input, fusionWeights(s), s.rrfK);
  // Stable sort: equal scores keep fuse()'s deterministic order.
  return fused
    .map((f) => {
      const exactIdBonus = scoreBonuses({ exactId: exact.has(f.id) }).exactId;
      const c = nodes.get(f.id)!;
      return {
        id: f.id,
        namespace: c.namespace,
        nodeKey: c.nodeKey,
        observationText: c.observationText === true,
        rrf: f.rrf,
        score: f.rrf + exactIdBonus,
        exactIdBonus,
        channels: f.channels,
      };
    })
    .sort((a, b) => b.score - a.score);
}

async function rerankHits(
  ctx: RetrievalContext,
  request: SearchRequest,
  found: (RankedId & { chunk: ChunkRow })[],
  neighbors: GraphNeighbor[],
  report: RerankReport,
): Promise<SearchHitResult[]> {
  const s = request.settings;
  // The pool: fused hits ∪ neighbours with text, one candidate per node.
  const pool = found.slice(0, Math.max(s.rerank.poolSize, request.k));
  const nodes = new Set(pool.map((r) => nodeId(r.chunk)));
  const extra = neighbors.filter((n) => n.chunkId !== null && !nodes.has(`${n.namespace}\u0000${n.key}`));
  const extraRows = extra.length
    ? await ctx.loadChunks(extra.map((n) => ({ namespace: n.namespace, chunkId: n.chunkId as number })))
    : [];
  extra.forEach((n, i) => {
    const chunk = extraRows[i];
    if (!chunk || nodes.has(nodeId(chunk))) return;
    nodes.add(nodeId(chunk));
    const rank = neighbors.indexOf(n);
    const rrf = s.graph.weight / (s.rrfK + rank + 1);
    pool.push({
      id: chunkKey(chunk),
      namespace: chunk.namespace,
      nodeKey: chunk.nodeKey,
      rrf,
      score: rrf,
      exactIdBonus: 0,
      channels: [{ channel: 'graph', rank, score: n.support }],
      chunk,
    });
  });

  const outcome = await rerank(
    ctx.llm,
    request.query,
    pool.map((r) => ({ id: r.id, text: (ctx.maskText ?? identity)(rerankText(r.chunk)) })),
    { timeoutMs: s.rerank.timeoutMs, charsPerCandidate: s.rerank.charsPerCandidate },
  );
  report.ms = outcome.ms;
  if (!outcome.ok) {
    report.reason = outcome.reason;
    return found.slice(0, request.k).map((r) => toHit(r, null));
  }
  report.applied = true;
  const byId = new Map(pool.map((r) => [r.id, r]));
  return applyRerank(
    pool.map((r) => r.id),
    outcome.scores,
  )
    .slice(0, request.k)
    .map((id) => toHit(byId.get(id)!, outcome.scores.get(id) ?? null));
}

const identity = (text: string) => text;

function rerankText(c: ChunkRow): string {
  const label = [c.title, c.heading].filter((x) => x && x.trim() !== '').join(' — ');
  return label ? `${label}\n${c.text}` : c.text;
}

function toHit(r: RankedId & { chunk: ChunkRow }, rerankScore: number | null): SearchHitResult {
  return {
    chunk: r.chunk,
    score: r.score,
    rrf: r.rrf,
    exactIdBonus: r.exactIdBonus,
    entityBonus: r.entityBonus ?? 0,
    namedEntities: r.namedEntities ?? [],
    labelBonus: r.labelBonus ?? 0,
    termsBonus: r.termsBonus ?? 0,
    askingPenalty: r.askingPenalty ?? 0,
    rerankScore,
    channels: r.channels,
  };
}

function nodeId(c: { namespace: string; nodeKey: string }): string {
  return `${c.namespace}\u0000${c.nodeKey}`;
}

function distinctNodes(
  items: { namespace: string; nodeKey: string }[],
): { namespace: string; key: string }[] {
  const seen = new Set<string>();
  const out: { namespace: string; key: string }[] = [];
  for (const c of items) {
    if (seen.has(nodeId(c))) continue;
    seen.add(nodeId(c));
    out.push({ namespace: c.namespace, key: c.nodeKey });
  }
  return out;
}

/** The runner's reports as the search result's channel statistics. */
function channelStats(runner: ChannelRunner): ChannelStat[] {
  return [...runner.reports()].map(([channel, r]) => ({
    channel,
    candidates: r.candidates,
    ms: r.ms,
    ...(r.status === 'ok' ? {} : { error: r.error ?? 'channel failed' }),
  }));
}
