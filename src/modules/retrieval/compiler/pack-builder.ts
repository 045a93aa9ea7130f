/**
 * Stage 6, pack: the recall floor (maxDistance → BELOW_RELEVANCE_FLOOR, a conflict served whole
 * when one version passes), then CURRENT first and the rest greedily by score under the
 * budget, conflict versions together, duplicates once. Every outcome becomes a trace decision.
 */
import { dedupKey } from './candidates.js';
import { conflictGroups } from './conflicts.js';
import { type CurrentOutcome, type PackEntry, type PackOutcome, Packer, piecePoints } from './packing.js';
import type { PackedItem } from './pack-types.js';
import { itemLabel, pieceCostOfPoints, renderItem } from './render.js';
import { type Scored, ZERO_SIGNALS } from './signals.js';
import { type TraceDecision, decisionOf } from './trace.js';

type Entry = PackEntry & { item: PackedItem };

export class PackBuilder {
  readonly packer: Packer;
  /** Trace decisions by candidate key, in the order they were taken. */
  readonly decisions = new Map<string, TraceDecision>();
  /** Packed items by candidate key (`current` for the caller's state). */
  readonly items = new Map<string, PackedItem>();
  /** Every scored candidate offered so far, by key. */
  readonly scored = new Map<string, Scored>();
  currentOutcome: CurrentOutcome | null = null;
  floorExcluded = 0;
  private groups = new Map<string, Scored[]>();
  private readonly stateKeys = new Set<string>();

  constructor(
    budgetTokens: number,
    private readonly charsPerToken: number,
    private readonly mask: (text: string) => string,
  ) {
    this.packer = new Packer(budgetTokens, charsPerToken);
  }

  /** The caller's state, packed first (possibly truncated). */
  packCurrent(ephemeral: string): void {
    if (ephemeral.length === 0) return;
    const outcome = this.packer.packCurrent(ephemeral);
    this.currentOutcome = outcome;
    if (!outcome.included) return;
    this.items.set('current', {
      kind: 'current',
      id: 'current',
      namespace: null,
      text: outcome.text,
      title: 'Current state',
      sourcePath: null,
      score: 0,
      signals: ZERO_SIGNALS,
      tokenEstimate: outcome.cost,
      conflict: false,
    });
  }

  /**
   * The recall floor over the scored union; returns the candidates that pass it, in order.
   * `maxDistance` null (or no query vector) lets everything pass.
   */
  applyFloor(scored: readonly Scored[], maxDistance: number | null): Scored[] {
    for (const s of scored) this.scored.set(s.candidate.key, s);
    this.groups = conflictGroups(scored, this.scored);
    const passes = new Set<string>();
    for (const s of scored) {
      const d = s.candidate.distance;
      if (maxDistance === null || d === null || d <= maxDistance) passes.add(s.candidate.key);
    }
    // A conflict is never silently resolved: when one version passes, every version is served.
    for (const members of this.groups.values()) {
      if (members.some((m) => passes.has(m.candidate.key)))
        for (const m of members) passes.add(m.candidate.key);
    }
    for (const s of scored) {
      if (passes.has(s.candidate.key) || this.stateKeys.has(s.candidate.key)) continue;
      this.floorExcluded += 1;
      this.decisions.set(s.candidate.key, {
        ...decisionOf(s, 'EXCLUDED', 'BELOW_RELEVANCE_FLOOR'),
        tokenEstimate: this.entryOf(s).cost,
      });
    }
    return scored.filter((s) => passes.has(s.candidate.key));
  }

  /**
   * The CURRENT_STATE section, item by item in its order (a conflict's versions are listed
   * together there); what does not fit is dropped OVER_BUDGET and may not come back later.
   */
  offerState(items: readonly Scored[]): void {
    for (let i = 0; i < items.length; ) {
      // The versions of an open conflict follow each other (current-state.ts): one group.
      const first = items[i]!.candidate;
      let end = i + 1;
      while (
        end < items.length &&
        first.conflict &&
        first.conflictsWith.includes(items[end]!.candidate.localId)
      )
        end += 1;
      const group = items.slice(i, end);
      const entries = new Map(group.map((s) => [s.candidate.key, this.entryOf(s)]));
      for (const s of group) {
        this.stateKeys.add(s.candidate.key);
        this.scored.set(s.candidate.key, s);
      }
      this.record(this.packer.offer([...entries.values()]), entries, false);
      i = end;
    }
  }

  /** Offers `list` (sorted best first), conflict groups whole; `expansion` marks multi-hop rows. */
  offer(list: readonly Scored[], expansion: boolean): void {
    // An item the leading section already holds (or dropped) is not offered again.
    list = list.filter((s) => !this.stateKeys.has(s.candidate.key));
    for (const s of list) this.scored.set(s.candidate.key, s);
    const entries = new Map(list.map((s) => [s.candidate.key, this.entryOf(s)]));
    const offered = new Set<string>();
    for (const s of list) {
      if (offered.has(s.candidate.key)) continue;
      const group = this.groups.get(s.candidate.key) ?? [s];
      const members = group.filter((m) => entries.has(m.candidate.key) && !offered.has(m.candidate.key));
      for (const m of members) offered.add(m.candidate.key);
      this.record(this.packer.offer(members.map((m) => entries.get(m.candidate.key)!)), entries, expansion);
    }
  }

  /** Whether any candidate was dropped for the budget. */
  overBudget(): boolean {
    return [...this.decisions.values()].some((d) => d.reason === 'OVER_BUDGET');
  }

  private record(outcomes: readonly PackOutcome[], entries: Map<string, Entry>, expansion: boolean): void {
    for (const o of outcomes) {
      const s = this.scored.get(o.key)!;
      const e = entries.get(o.key)!;
      if (o.status === 'INCLUDED') {
        this.items.set(o.key, e.item);
        this.decisions.set(o.key, {
          ...decisionOf(s, 'INCLUDED', expansion ? 'MULTI_HOP_EXPANSION' : null, expansion),
          tokenEstimate: e.cost,
        });
      } else if (o.reason === 'OVER_BUDGET') {
        this.decisions.set(o.key, {
          ...decisionOf(s, 'EXCLUDED', 'OVER_BUDGET', expansion),
          tokenEstimate: e.cost,
        });
      } else {
        this.decisions.set(o.key, {
          ...decisionOf(s, 'EXCLUDED', 'DUPLICATE', expansion),
          tokenEstimate: e.cost,
          duplicateOf: this.scored.get(o.duplicateOf)?.candidate.globalId ?? null,
        });
      }
    }
  }

  /**
   * A candidate as a pack entry. Personal data is masked (for principals without the pii
   * right) before costs are measured: the GraphQL layer masks again, and a placeholder may be
   * longer than what it replaces.
   */
  private entryOf(s: Scored): Entry {
    const c = s.candidate;
    const text = this.mask(c.text);
    const title = c.title === null ? null : this.mask(c.title);
    const block = renderItem({
      kind: c.kind,
      label: itemLabel([title, c.sourcePath, c.kind === 'chunk' ? c.entityKeys[0] : c.localId]),
      text,
    });
    // Counted once: the cost here, the packer's budget arithmetic from the same figure.
    const points = piecePoints(block);
    const cost = pieceCostOfPoints(points, this.charsPerToken);
    return {
      key: c.key,
      section: c.section,
      block,
      cost,
      points,
      dedupKey: dedupKey(c.text),
      score: s.score,
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
  }
}
