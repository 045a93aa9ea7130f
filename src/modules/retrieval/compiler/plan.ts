/**
 * Stage 1, plan: what one compilation will do — the strategy's channels and weights with the
 * request's overrides, the channel filter, the candidates asked of each channel. Pure.
 */
import { CHANNEL_LIMIT } from '../pipeline/channels/facts.js';
import { type ChunkFilter, NO_FILTERS } from '../pipeline/channels/filters.js';
import { type RetrievalSettings, resolveSettings } from '../pipeline/settings.js';
import { MULTI_HOP_WEIGHT, QUERY_CHANNELS } from '../pipeline/vocabulary.js';
import type { CompileRequest } from './pack-types.js';
import { type CompilerChannel, planFor } from './strategies.js';

export { MULTI_HOP_WEIGHT };

const QUERY = new Set<CompilerChannel>(QUERY_CHANNELS);

export interface CompilePlan {
  /** Facts valid at this instant are served; freshness is measured from it (asOf, or now). */
  asOf: Date;
  /**
   * The caller's asOf: what memory held then (observations that occurred by then, chunks
   * written by then, facts whose evidence was there by then). null = now, no bound.
   */
  heldAt: Date | null;
  settings: RetrievalSettings;
  channels: readonly CompilerChannel[];
  /** RRF weight of every list, `multi_hop` included. */
  weights: Record<CompilerChannel | 'multi_hop', number>;
  /** The query text the channels read ('' for BRIEFING, which does not use it). */
  query: string;
  hasQuery: boolean;
  /** Candidates asked of each channel. */
  perChannel: number;
  filter: ChunkFilter;
  /** Relevance scopes requested; null = no relevance filter. */
  relevanceScopes: string[] | null;
  visibleScopes: string[] | null;
}

export function planCompilation(
  req: CompileRequest,
  context: { embedderModel: string; visibleScopes: string[] | null; now: Date },
): CompilePlan {
  const settings = resolveSettings({ embedderModel: context.embedderModel });
  const strategy = planFor(req.strategy, settings.vector.weight, req.query);
  for (const [channel, w] of Object.entries(req.weights ?? {})) {
    if (typeof w === 'number') strategy.weights[channel as CompilerChannel] = w;
  }
  const channels = req.window ? strategy.channels.filter((c) => QUERY.has(c)) : strategy.channels;
  const query = strategy.usesQuery ? req.query : '';
  return {
    asOf: req.asOf ?? context.now,
    heldAt: req.asOf ?? null,
    settings,
    channels,
    weights: { ...strategy.weights, multi_hop: MULTI_HOP_WEIGHT },
    query,
    hasQuery: query.trim().length > 0,
    perChannel: Math.min(CHANNEL_LIMIT, Math.max(20, req.k * Math.max(2, req.namespaces.length))),
    filter: {
      ...NO_FILTERS,
      namespaces: req.namespaces,
      visibleScopes: context.visibleScopes,
      since: req.window?.since ?? null,
      until: req.window?.until ?? null,
      asOf: req.asOf ?? null,
      // Summaries come into a pack through its SUMMARIES section only (summary-items.ts).
      excludeKinds: ['summary'],
    },
    relevanceScopes: req.scopes.length > 0 ? req.scopes : null,
    visibleScopes: context.visibleScopes,
  };
}

export function runs(plan: CompilePlan, channel: CompilerChannel): boolean {
  return plan.channels.includes(channel);
}
