/**
 * The compiler's request, dependencies and served pack: plain values at the bottom of the
 * compiler, so that stages, the router's handlers and the GraphQL types can all name them
 * without importing the orchestrator.
 */
import type { Queryable } from '../../../db/database.js';
import type { Embedder } from '../../../providers/embedder.js';
import type { CandidateKind, SectionKind, SourceRefValue } from './candidates.js';
import type { ScoreSignals } from './signals.js';
import type { CompilerChannel, ContextStrategy } from './strategies.js';

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
  /** Traces older than this are pruned (in the namespaces `pruneDue` names). */
  traceRetentionDays: number;
  /**
   * Called once per compilation: of its namespaces, those whose old traces this write also
   * prunes. Pruning stays within the namespaces written, as sharding by namespace needs.
   */
  pruneDue: (namespaces: readonly string[]) => string[];
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
  kind: CandidateKind | 'current' | 'session';
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
}
