/**
 * Stage 8, assemble: the served pack (sections, rendered text, sources, warnings, what was
 * dropped) and its trace draft, one decision per candidate — blocked ones included.
 */
import { estimateTokens } from '../../../domain/tokens.js';
import type { ChannelRunner } from '../pipeline/channel-runner.js';
import type { CandidatePool } from './candidate-pool.js';
import { type SourceRefValue, parseCandidateKey } from './candidates.js';
import type { PackBuilder } from './pack-builder.js';
import type { CompileRequest, ContextPackValue, DroppedValue, PackSectionValue } from './pack-types.js';
import { renderPack } from './render.js';
import type { Scored } from './signals.js';
import { type TraceDecision, type TracedDecision, currentDecision } from './trace.js';

export interface Assembled {
  pack: ContextPackValue;
  decisions: TracedDecision[];
  current: TraceDecision | null;
}

function blockedDecisions(builder: PackBuilder, pool: CandidatePool): void {
  for (const b of pool.blocked.values()) {
    if (builder.decisions.has(b.key)) continue;
    builder.decisions.set(b.key, {
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
}

function packWarnings(
  conflicts: string[],
  lost: number,
  runner: ChannelRunner,
  builder: PackBuilder,
): string[] {
  const warnings: string[] = [];
  if (conflicts.length > 0) {
    warnings.push(
      `open_conflict: ${conflicts.length} fact(s) in open conflict; every version is served with conflict: true`,
    );
  }
  if (lost > 0)
    warnings.push(`evidence_lost: ${lost} fact(s) hidden because their evidence was redacted or purged`);
  warnings.push(...runner.warnings('the pack'));
  const current = builder.currentOutcome;
  if (current?.truncated) {
    warnings.push(
      current.included
        ? 'current_truncated: the ephemeral context was cut to fit the budget'
        : 'current_dropped: the ephemeral context does not fit the budget',
    );
  }
  return warnings;
}

export function assemblePack(
  req: CompileRequest,
  context: {
    traceId: string;
    charsPerToken: number;
    mask: (text: string) => string;
    runner: ChannelRunner;
    pool: CandidatePool;
    builder: PackBuilder;
    /** The first pass's scored union. */
    scored: readonly Scored[];
  },
): Assembled {
  const { builder, pool, mask } = context;
  blockedDecisions(builder, pool);
  const keysBySection = builder.packer.sectionKeys();
  const sections: PackSectionValue[] = keysBySection.map(({ kind, keys }) => ({
    kind,
    items: keys.map((k) => builder.items.get(k)!).filter(Boolean),
  }));
  const text = renderPack(builder.packer.rendered());
  const tokenEstimate = estimateTokens(text, context.charsPerToken);
  if (tokenEstimate > req.budgetTokens) {
    // Impossible by construction (see render.ts); refuse to hand out an oversized pack.
    throw new Error(`packed text (${tokenEstimate}) exceeds the budget (${req.budgetTokens})`);
  }
  const sources = new Map<string, SourceRefValue & { namespace: string }>();
  for (const key of keysBySection.flatMap((s) => s.keys)) {
    const c = pool.get(key);
    if (!c?.source) continue;
    const k = `${c.namespace}\u0000${c.source.key}`;
    if (!sources.has(k)) sources.set(k, { namespace: c.namespace, ...c.source, title: mask(c.source.title) });
  }
  // Open conflicts among the first pass's candidates (multi-hop rows never add one).
  const conflictFacts = context.scored.filter((s) => s.candidate.kind === 'fact' && s.candidate.conflict);
  const conflicts = [...new Set(conflictFacts.map((s) => s.candidate.localId))].sort();
  const lost = [...pool.blocked.values()].filter((b) => b.reason === 'EVIDENCE_LOST').length;
  const warnings = packWarnings(conflicts, lost, context.runner, builder);

  const current = builder.currentOutcome;
  const dropped: DroppedValue[] = [];
  if (current && !current.included)
    dropped.push({ id: 'current', reason: 'OVER_BUDGET', tokenEstimate: current.fullCost });
  for (const d of builder.decisions.values()) {
    if (d.reason === 'OVER_BUDGET' || d.reason === 'BELOW_RELEVANCE_FLOOR') {
      dropped.push({ id: d.id, reason: d.reason, tokenEstimate: d.tokenEstimate ?? 0 });
    }
  }
  const memoryItems = sections.filter((s) => s.kind !== 'CURRENT').reduce((n, s) => n + s.items.length, 0);
  const emptyReason =
    memoryItems === 0 && builder.floorExcluded > 0 && !builder.overBudget() ? 'no_relevant_memory' : null;
  return {
    pack: {
      query: req.query,
      sections,
      sources: [...sources.values()],
      tokenEstimate,
      budget: {
        maxTokens: req.budgetTokens,
        used: builder.packer.used,
        truncated: Boolean(current?.truncated),
        dropped,
      },
      conflicts,
      warnings,
      emptyReason,
      traceId: context.traceId,
      text,
    },
    decisions: [...builder.decisions].map(([key, decision]) => ({ decision, scopes: pool.scopesOf(key) })),
    current: current ? currentDecision(current) : null,
  };
}
