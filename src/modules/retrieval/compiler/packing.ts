/**
 * Packing under a token budget (pure). CURRENT goes first (truncated to fit if it must), then
 * items are offered greedily by score: an item that does not fit is dropped OVER_BUDGET and
 * the next, smaller one may still fit. The banner and each section header are charged when
 * the first item that needs them is packed. The packer counts the code points of the text it
 * will render (pieces joined by newlines), so `used` is exactly the estimate of that text —
 * the pack's tokenEstimate — and never exceeds the budget.
 * Members of a conflict group are packed together or not at all (never one version silently).
 */
import { countCodePoints } from '../../../domain/tokens.js';
import { SECTION_KINDS, type SectionKind } from './candidates.js';
import {
  BANNER,
  type RenderedSection,
  TRUNCATION_MARK,
  pieceCost,
  renderItem,
  sectionHeader,
  sliceCodePoints,
} from './render.js';

export type PackSection = Exclude<SectionKind, 'CURRENT'>;

export interface PackEntry {
  key: string;
  section: PackSection;
  /** The rendered block (see render.ts). */
  block: string;
  /** pieceCost(block). */
  cost: number;
  /** piecePoints(block), when the caller counted it already. */
  points?: number;
  /** Same source text reached twice is packed once. */
  dedupKey: string;
  /** The item's score: a section lists its items by it, best first (packing order breaks ties). */
  score?: number;
}

export type PackOutcome =
  | { key: string; status: 'INCLUDED' }
  | { key: string; status: 'EXCLUDED'; reason: 'OVER_BUDGET'; tokenEstimate: number }
  | { key: string; status: 'EXCLUDED'; reason: 'DUPLICATE'; duplicateOf: string };

export interface CurrentOutcome {
  included: boolean;
  truncated: boolean;
  /** The text actually packed (possibly truncated). */
  text: string;
  block: string;
  cost: number;
  /** Cost of the untruncated block. */
  fullCost: number;
}

export class Packer {
  /** Code points of the rendered text so far, one newline per piece included. */
  private usedPoints = 0;
  private bannerCharged = false;
  private readonly open = new Set<SectionKind>();
  private readonly byDedup = new Map<string, string>();
  private readonly packed = new Map<SectionKind, { key: string; block: string; score: number }[]>();

  constructor(
    readonly budget: number,
    readonly charsPerToken: number,
  ) {
    if (!Number.isInteger(budget) || budget <= 0) throw new RangeError(`budget must be a positive integer`);
  }

  /** The token estimate of the text rendered so far (renderPack of `rendered()`). */
  get used(): number {
    return this.tokensFor(this.usedPoints);
  }

  get remaining(): number {
    return this.budget - this.used;
  }

  // The rendered text has no newline after its last piece.
  private tokensFor(points: number): number {
    return points === 0 ? 0 : Math.ceil((points - 1) / this.charsPerToken);
  }

  private fits(extraPoints: number): boolean {
    return this.tokensFor(this.usedPoints + extraPoints) <= this.budget;
  }

  /** Code points that adding blocks to `sections` would add: banner and new headers. */
  private overhead(sections: Iterable<SectionKind>): number {
    let extra = this.bannerCharged ? 0 : piecePoints(BANNER);
    const seen = new Set<SectionKind>();
    for (const s of sections) {
      if (this.open.has(s) || seen.has(s)) continue;
      seen.add(s);
      extra += piecePoints(sectionHeader(s));
    }
    return extra;
  }

  private commit(section: SectionKind, key: string, block: string, score: number, points?: number): void {
    if (!this.bannerCharged) {
      this.usedPoints += piecePoints(BANNER);
      this.bannerCharged = true;
    }
    if (!this.open.has(section)) {
      this.usedPoints += piecePoints(sectionHeader(section));
      this.open.add(section);
    }
    this.usedPoints += points ?? piecePoints(block);
    const list = this.packed.get(section) ?? [];
    list.push({ key, block, score });
    this.packed.set(section, list);
  }

  /**
   * A section's items by score, best first. Expansions (multi-hop) are offered after the main
   * list, so packing order alone would list a strong late item below weaker ones.
   */
  private ranked(kind: SectionKind): { key: string; block: string; score: number }[] {
    const list = this.packed.get(kind) ?? [];
    return list
      .map((entry, order) => ({ entry, order }))
      .sort((a, b) => b.entry.score - a.entry.score || a.order - b.order)
      .map((x) => x.entry);
  }

  /**
   * The caller's current state, packed first. When it does not fit whole it is cut at a
   * code-point boundary (marked) to the largest prefix that fits; `truncated` says so.
   */
  packCurrent(text: string): CurrentOutcome {
    const block = renderItem({ kind: 'current', label: 'current', text });
    const fullCost = pieceCost(block, this.charsPerToken);
    const overhead = this.overhead(['CURRENT']);
    if (this.fits(overhead + piecePoints(block))) {
      this.commit('CURRENT', 'current', block, Number.POSITIVE_INFINITY);
      return { included: true, truncated: false, text, block, cost: fullCost, fullCost };
    }
    // No prefix longer than the code points still free can fit; search below that.
    const roomPoints = Math.floor(this.budget * this.charsPerToken) + 1 - this.usedPoints - overhead;
    const fits = (n: number) => {
      const t = sliceCodePoints(text, n) + TRUNCATION_MARK;
      const b = renderItem({ kind: 'current', label: 'current', text: t });
      return { t, b, c: pieceCost(b, this.charsPerToken) };
    };
    let lo = 0;
    let hi = Math.max(0, roomPoints);
    let best: { t: string; b: string; c: number } | null = null;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const attempt = fits(mid);
      if (this.fits(overhead + piecePoints(attempt.b))) {
        best = attempt;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (!best || best.t === TRUNCATION_MARK) {
      return { included: false, truncated: true, text: '', block: '', cost: 0, fullCost };
    }
    this.commit('CURRENT', 'current', best.b, Number.POSITIVE_INFINITY);
    return { included: true, truncated: true, text: best.t, block: best.b, cost: best.c, fullCost };
  }

  /**
   * Offers a group (usually one entry; the versions of a conflict together). Duplicates of
   * already packed text are excluded as DUPLICATE; the rest is packed whole or dropped whole.
   */
  offer(group: readonly PackEntry[]): PackOutcome[] {
    const outcomes: PackOutcome[] = [];
    const fresh: PackEntry[] = [];
    const inGroup = new Map<string, string>();
    for (const entry of group) {
      const dup = this.byDedup.get(entry.dedupKey) ?? inGroup.get(entry.dedupKey);
      if (dup !== undefined) {
        outcomes.push({ key: entry.key, status: 'EXCLUDED', reason: 'DUPLICATE', duplicateOf: dup });
      } else {
        inGroup.set(entry.dedupKey, entry.key);
        fresh.push(entry);
      }
    }
    if (fresh.length === 0) return outcomes;
    const need =
      this.overhead(fresh.map((e) => e.section)) +
      fresh.reduce((sum, e) => sum + (e.points ?? piecePoints(e.block)), 0);
    if (!this.fits(need)) {
      for (const e of fresh) {
        outcomes.push({ key: e.key, status: 'EXCLUDED', reason: 'OVER_BUDGET', tokenEstimate: e.cost });
      }
      return outcomes;
    }
    for (const e of fresh) {
      this.commit(e.section, e.key, e.block, e.score ?? 0, e.points);
      this.byDedup.set(e.dedupKey, e.key);
      outcomes.push({ key: e.key, status: 'INCLUDED' });
    }
    return outcomes;
  }

  /** Packed keys per section, in section order, items by score (best first). */
  sectionKeys(): { kind: SectionKind; keys: string[] }[] {
    return SECTION_KINDS.filter((k) => this.packed.has(k)).map((kind) => ({
      kind,
      keys: this.ranked(kind).map((e) => e.key),
    }));
  }

  /** Blocks per section, in section order — input of renderPack. */
  rendered(): RenderedSection[] {
    return SECTION_KINDS.filter((k) => this.packed.has(k)).map((kind) => ({
      kind,
      blocks: this.ranked(kind).map((e) => e.block),
    }));
  }
}

/** Greedy by score: groups are offered in the given order (already sorted by score). */
export function packGreedy(packer: Packer, groups: readonly (readonly PackEntry[])[]): PackOutcome[] {
  return groups.flatMap((g) => packer.offer(g));
}

/** Code points a piece adds to the rendered text, with the newline that follows it. */
export function piecePoints(piece: string): number {
  return countCodePoints(piece) + 1;
}
