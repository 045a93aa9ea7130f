/**
 * The trace of a compilation, built in two steps: the stages record one decision per candidate
 * in a draft, and the draft is written LAST, from the pack actually served — after the route's
 * post-processing (AUTO handlers, session compaction) — so that a trace never describes a pack
 * nobody received.
 */
import { randomBytes } from 'node:crypto';
import { type Queryable, forWrites } from '../../../db/database.js';
import { isVisibilityScope } from '../../../domain/scopes.js';
import { estimateTokens } from '../../../domain/tokens.js';
import type { ChannelReport } from '../pipeline/channel-runner.js';
import { insertTraces, type TracePrune, type TraceWrite } from '../store/trace-store.js';
import { type CandidateKind, type SectionKind, candidateGlobalId } from './candidates.js';
import type { CurrentOutcome } from './packing.js';
import type { CompileRequest, ContextPackValue, PackedItem } from './pack-types.js';
import { type ScoreSignals, type Scored, ZERO_SIGNALS } from './signals.js';

export type Decision = 'INCLUDED' | 'EXCLUDED' | 'BLOCKED';

/** One line of the trace: what happened to one candidate, and why. */
export interface TraceDecision {
  id: string;
  kind: CandidateKind | 'current' | 'session';
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

/** A decision with the scopes of the item it names (the trace's visibility derives from them). */
export interface TracedDecision {
  decision: TraceDecision;
  scopes: readonly string[];
}

/** Everything the trace needs that the served pack does not say. */
export interface TraceDraft {
  traceId: string;
  principalId: string;
  namespaces: string[];
  /** The request as traced: no ephemeral content, only its size. */
  request: Record<string, unknown>;
  channels: Record<string, ChannelReport>;
  current: TraceDecision | null;
  decisions: TracedDecision[];
  /** Candidates beyond CANDIDATE_LIMIT are counted, not traced. */
  candidatesOverLimit: number;
}

export function newTraceId(): string {
  return `ctx-${randomBytes(12).toString('hex')}`;
}

export function decisionOf(
  s: Scored,
  decision: Decision,
  reason: string | null,
  expansion = false,
): TraceDecision {
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

export function currentDecision(outcome: CurrentOutcome): TraceDecision {
  return {
    id: 'current',
    kind: 'current',
    namespace: null,
    localId: null,
    decision: outcome.included ? 'INCLUDED' : 'EXCLUDED',
    reason: outcome.included ? (outcome.truncated ? 'TRUNCATED' : null) : 'OVER_BUDGET',
    score: null,
    signals: null,
    section: 'CURRENT',
    tokenEstimate: outcome.included ? outcome.cost : outcome.fullCost,
    distance: null,
    conflict: false,
    expansion: null,
    duplicateOf: null,
  };
}

/** The traced request: what was asked, never the caller's state itself (only its size). */
export function tracedRequest(
  req: CompileRequest,
  ephemeral: string,
  charsPerToken: number,
): Record<string, unknown> {
  return {
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
    ephemeralContext: {
      present: req.ephemeralContext !== null && req.ephemeralContext !== undefined,
      chars: ephemeral.length,
      tokens: estimateTokens(ephemeral, charsPerToken),
    },
  };
}

/** A packed item replaced after packing: by `by` (its stand-in), or dropped when `by` is null. */
export interface Replacement {
  itemId: string;
  by: PackedItem | null;
  /** The reason the replaced item's decision records (e.g. SESSION_COMPACTED). */
  reason: string;
}

/**
 * The draft after the route replaced packed items (session compaction): each replaced item is
 * EXCLUDED with the reason, and each stand-in is INCLUDED where the item it replaces was, so
 * that the trace lists exactly what was served.
 */
export function withReplacements(draft: TraceDraft, replacements: readonly Replacement[]): TraceDraft {
  if (replacements.length === 0) return draft;
  const byId = new Map(replacements.map((r) => [r.itemId, r]));
  const decisions: TracedDecision[] = [];
  for (const d of draft.decisions) {
    const r = d.decision.decision === 'INCLUDED' ? byId.get(d.decision.id) : undefined;
    if (!r) {
      decisions.push(d);
      continue;
    }
    decisions.push({ ...d, decision: { ...d.decision, decision: 'EXCLUDED', reason: r.reason } });
    if (r.by) {
      decisions.push({
        scopes: [],
        decision: {
          ...d.decision,
          id: r.by.id,
          kind: r.by.kind,
          localId: null,
          decision: 'INCLUDED',
          reason: null,
          score: r.by.score,
          signals: r.by.signals,
          tokenEstimate: r.by.tokenEstimate,
          distance: null,
          conflict: r.by.conflict,
          duplicateOf: null,
        },
      });
    }
  }
  return { ...draft, decisions };
}

/** One trace row per namespace, summarising `served` (the pack as the caller received it). */
export function traceRows(draft: TraceDraft, served: ContextPackValue): TraceWrite[] {
  const memoryItems = served.sections
    .filter((s) => s.kind !== 'CURRENT')
    .reduce((n, s) => n + s.items.length, 0);
  const request = {
    ...draft.request,
    result: {
      items: memoryItems,
      tokenEstimate: served.tokenEstimate,
      used: served.budget.used,
      truncated: served.budget.truncated,
      emptyReason: served.emptyReason,
      warnings: served.warnings,
      candidatesOverLimit: draft.candidatesOverLimit,
    },
  };
  return draft.namespaces.map((ns) => {
    const mine = draft.decisions.filter((d) => d.decision.namespace === ns);
    return {
      namespace: ns,
      traceId: draft.traceId,
      kind: 'context',
      principalId: draft.principalId,
      request,
      channels: draft.channels,
      decisions: [
        ...(draft.current ? [storedDecision(draft.current, ns)] : []),
        ...mine.map((d) => storedDecision(d.decision, ns)),
      ],
      visibility: visibilityOf(mine),
    };
  });
}

// ------------------------------------------------------------------ stored form

/*
 * A trace row holds one decision per candidate (a hundred and more under a large budget): as
 * written whole they made ~50 KB of JSON per pack, to build, send, parse and store on every
 * read. A decision is stored without what its reader can restore: values at their default (null,
 * false, a zero signal, an empty list), the namespace of the row it is in, and the Relay id of a
 * stored item (derived from kind, namespace and local id). `decisionsAsServed` restores each
 * decision whole, so contextTrace answers as before, for rows written in either form.
 */

const CANDIDATE_KINDS: ReadonlySet<string> = new Set<CandidateKind>([
  'fact',
  'chunk',
  'observation',
  'entity',
]);

const DECISION_DEFAULTS: Omit<TraceDecision, 'id' | 'kind' | 'namespace' | 'decision'> = {
  localId: null,
  reason: null,
  score: null,
  signals: null,
  section: null,
  tokenEstimate: null,
  distance: null,
  conflict: false,
  expansion: null,
  duplicateOf: null,
};

type Stored = Record<string, unknown>;

/** A decision as a trace row of `namespace` stores it (see above). */
export function storedDecision(d: TraceDecision, namespace: string): Stored {
  const out: Stored = { kind: d.kind, decision: d.decision };
  if (d.namespace !== namespace) out.namespace = d.namespace;
  const derivedId = d.localId !== null && d.namespace !== null && CANDIDATE_KINDS.has(d.kind);
  if (!derivedId) out.id = d.id;
  if (d.localId !== null) out.localId = d.localId;
  if (d.reason !== null) out.reason = d.reason;
  if (d.score !== null) out.score = d.score;
  if (d.signals !== null) out.signals = storedSignals(d.signals);
  if (d.section !== null) out.section = d.section;
  if (d.tokenEstimate !== null) out.tokenEstimate = d.tokenEstimate;
  if (d.distance !== null) out.distance = d.distance;
  if (d.conflict) out.conflict = true;
  if (d.expansion !== null) out.expansion = d.expansion;
  if (d.duplicateOf !== null) out.duplicateOf = d.duplicateOf;
  return out;
}

function storedSignals(s: ScoreSignals): Stored {
  const out: Stored = {};
  for (const key of Object.keys(s) as (keyof ScoreSignals)[]) {
    const v = s[key];
    if (key === 'channels') {
      if (s.channels.length > 0)
        out.channels = s.channels.map((c) =>
          c.score === null
            ? { channel: c.channel, rank: c.rank }
            : { channel: c.channel, rank: c.rank, score: c.score },
        );
    } else if (Array.isArray(v) ? v.length > 0 : v !== 0) out[key] = v;
  }
  return out;
}

/** The decisions of a stored context trace row, each whole again (rows of either form). */
export function decisionsAsServed(decisions: readonly unknown[], namespace: string): TraceDecision[] {
  return decisions.map((raw) => {
    const d = raw as Stored & Pick<TraceDecision, 'kind' | 'decision'>;
    const ns = 'namespace' in d ? (d.namespace as string | null) : namespace;
    const localId = (d.localId as string | null | undefined) ?? null;
    const signals = d.signals as (Partial<ScoreSignals> & Stored) | null | undefined;
    return {
      ...DECISION_DEFAULTS,
      ...d,
      id:
        (d.id as string | undefined) ??
        candidateGlobalId(d.kind as CandidateKind, ns as string, localId as string),
      namespace: ns,
      signals: signals
        ? {
            ...ZERO_SIGNALS,
            ...signals,
            channels: (signals.channels ?? []).map((c) => ({ ...c, score: c.score ?? null })),
          }
        : null,
    };
  });
}

/** Visibility scopes of the items a trace names: its reader must hold all of them. */
function visibilityOf(decisions: readonly TracedDecision[]): string[] {
  const out = new Set<string>();
  for (const d of decisions) for (const s of d.scopes) if (isVisibilityScope(s)) out.add(s);
  return [...out].sort();
}

/**
 * Writes the trace of `served`. A trace that cannot be stored costs the pack a warning, never
 * the read; the returned pack carries it.
 */
export async function writeTrace(
  db: Queryable,
  draft: TraceDraft,
  served: ContextPackValue,
  options: { prune: TracePrune; onError?: (channel: string, error: unknown) => void },
): Promise<ContextPackValue> {
  try {
    // On the primary: the pack may have been read on a replica, which takes no writes.
    await insertTraces(forWrites(db), traceRows(draft, served), options.prune);
    return served;
  } catch (error) {
    options.onError?.('trace', error);
    return {
      ...served,
      warnings: [...served.warnings, 'trace_not_saved: the trace of this pack could not be stored'],
    };
  }
}
