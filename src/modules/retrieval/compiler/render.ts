/**
 * How a pack is rendered for a prompt, and what each piece costs. The rendered text is the
 * concatenation of pieces (banner, section headers, item blocks), each followed by a newline,
 * and each piece's cost (an item's tokenEstimate) is `estimateTokens(piece + "\n")`. Packing
 * counts the code points of the whole text instead, so the pack's `budget.used` equals its
 * tokenEstimate; the sum of piece costs can be a little higher (each is rounded up).
 */
import { estimateTokens } from '../../../domain/tokens.js';
import { collapseWhitespace } from '../../../domain/whitespace.js';
import {
  CONTEXT_BANNER,
  SECTION_HEADERS,
  type SectionKey,
  neutralizeUntrusted,
  renderDelimited,
  sanitizeLabel,
} from '../../../domain/untrusted-text.js';
import type { SectionKind } from './candidates.js';

const HEADER_KEY: Readonly<Record<SectionKind, SectionKey>> = {
  CURRENT: 'current',
  CURRENT_STATE: 'currentState',
  SUMMARIES: 'summaries',
  RELEVANT_FACTS: 'relevantFacts',
  EPISODES: 'episodes',
  DOCUMENTS: 'documents',
  RELATED_ENTITIES: 'relatedEntities',
  RECENT_OBSERVATIONS: 'recentObservations',
};

export function sectionHeader(kind: SectionKind): string {
  return SECTION_HEADERS[HEADER_KEY[kind]];
}

/** Cost of one piece of the rendered text, its trailing newline included. */
export function pieceCost(piece: string, charsPerToken: number): number {
  return estimateTokens(`${piece}\n`, charsPerToken);
}

/** pieceCost of a piece whose code points, trailing newline included, are counted already. */
export function pieceCostOfPoints(points: number, charsPerToken: number): number {
  if (!Number.isFinite(charsPerToken) || charsPerToken <= 0) {
    throw new RangeError(`charsPerToken must be a positive number, got ${charsPerToken}`);
  }
  return Math.ceil(points / charsPerToken);
}

export interface RenderableItem {
  kind: string;
  /** Label shown on the fence (title, heading, source); sanitised here. */
  label: string;
  text: string;
}

/**
 * One item's block. Facts and entities are one neutralised line (a bullet); texts from outside
 * (chunks, observations, the caller's current state) are fenced and neutralised.
 */
export function renderItem(item: RenderableItem): string {
  if (item.kind === 'fact' || item.kind === 'entity') {
    const line = neutralizeUntrusted(collapseWhitespace(item.text).trim());
    return `- ${line}`;
  }
  return renderDelimited(item.label, item.text);
}

export interface RenderedSection {
  kind: SectionKind;
  blocks: string[];
}

/** The pack as prompt text; empty when nothing was packed (an empty pack renders as ""). */
export function renderPack(sections: readonly RenderedSection[]): string {
  const nonEmpty = sections.filter((s) => s.blocks.length > 0);
  if (nonEmpty.length === 0) return '';
  const lines = [CONTEXT_BANNER];
  for (const section of nonEmpty) {
    lines.push(sectionHeader(section.kind));
    lines.push(...section.blocks);
  }
  return lines.join('\n');
}

export const BANNER = CONTEXT_BANNER;

/** A label for a fence: the parts that exist, joined, sanitised. */
export function itemLabel(parts: readonly (string | null | undefined)[]): string {
  return sanitizeLabel(parts.filter((p): p is string => Boolean(p?.trim())).join(' · '));
}

export const TRUNCATION_MARK = ' …[truncated]';

/**
 * The caller's ephemeral state as text: a string as is; an object as `key: value` lines
 * (non-string values as compact JSON); anything else as JSON.
 */
export function ephemeralText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join('\n');
  }
  return JSON.stringify(value);
}

/** The first `n` code points of `text`. */
export function sliceCodePoints(text: string, n: number): string {
  if (n <= 0) return '';
  let units = 0;
  let count = 0;
  while (units < text.length && count < n) {
    const code = text.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < text.length ? 2 : 1;
    count++;
  }
  return text.slice(0, units);
}
