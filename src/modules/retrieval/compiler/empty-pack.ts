/**
 * Why a pack holds no memory, said twice: as `emptyReason` and as a warning. In order of what
 * the caller can act on: the namespaces hold nothing it can read (a typo, a namespace not
 * written yet, or rows all hidden from it — answered alike); the budget is smaller than the
 * smallest item found; nothing found is relevant to the query.
 */
import type { Queryable } from '../../../db/database.js';
import { namespacesWithMemory } from '../store/namespace-memory-store.js';
import type { ContextPackValue } from './pack-types.js';

export type EmptyReason = 'unknown_namespace' | 'budget_too_small' | 'no_relevant_memory';

/** The pack's memory items (the caller's own CURRENT state aside). */
export function memoryItemCount(pack: Pick<ContextPackValue, 'sections'>): number {
  return pack.sections.filter((s) => s.kind !== 'CURRENT').reduce((n, s) => n + s.items.length, 0);
}

/** Sets emptyReason and adds its warning when the pack holds no memory; else leaves it as is. */
export async function explainEmptyPack(
  pack: ContextPackValue,
  db: Queryable,
  namespaces: readonly string[],
  visibleScopes: string[] | null,
): Promise<void> {
  if (memoryItemCount(pack) > 0) return;
  const overBudget = pack.budget.dropped.filter((d) => d.reason === 'OVER_BUDGET' && d.id !== 'current');
  let reason: EmptyReason;
  let warning: string;
  if (overBudget.length > 0) {
    const smallest = Math.min(...overBudget.map((d) => d.tokenEstimate));
    reason = 'budget_too_small';
    warning = `budget_too_small: the smallest item found needs about ${smallest} tokens with its headers, the budget is ${pack.budget.maxTokens}`;
  } else {
    const held = await namespacesWithMemory(db, namespaces, visibleScopes);
    const unknown = namespaces.filter((ns) => !held.has(ns));
    if (held.size === 0) {
      reason = 'unknown_namespace';
      warning = `unknown_namespace: ${unknown.map((ns) => `"${ns}"`).join(', ')} hold(s) nothing you can read`;
    } else {
      reason = 'no_relevant_memory';
      warning = 'no_relevant_memory: memory holds nothing that matches the query';
    }
  }
  pack.emptyReason = reason;
  pack.warnings = [...pack.warnings, warning];
}
