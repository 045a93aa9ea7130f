import {
  CONTEXT_BANNER,
  SECTION_HEADERS,
  neutralizeUntrusted,
  renderDelimited,
  sanitizeLabel,
} from '../../../domain/untrusted-text.js';

/**
 * Search results rendered for a prompt: the found fragments, numbered so an answer can cite
 * them as [n], each fenced with its key, title, heading and source; then the related entities
 * of the graph. Every piece of stored text is untrusted: bodies go through
 * `neutralizeUntrusted` inside our fence, labels are reduced to one safe line, so nothing a
 * source wrote can pass for an instruction, a role marker or one of our headers.
 */

export interface ContextFragment {
  /** Citation number, 1-based. */
  n: number;
  key: string;
  title: string | null;
  heading: string | null;
  sourcePath: string | null;
  /** When it happened, if known (conversations and events). */
  occurredAt?: Date | null;
  text: string;
}

export interface ContextEntity {
  key: string;
  kind: string;
  title: string;
  sourcePath: string | null;
  distance: number;
}

export function fragmentLabel(f: ContextFragment): string {
  const parts = [`[${f.n}] ${f.key}`];
  const title = [f.title, f.heading].filter((x): x is string => !!x && x.trim() !== '').join(' — ');
  if (title) parts.push(title);
  if (f.sourcePath) parts.push(`source: ${f.sourcePath}`);
  if (f.occurredAt) parts.push(`at: ${f.occurredAt.toISOString()}`);
  return parts.join(' | ');
}

export function renderFragment(f: ContextFragment): string {
  return renderDelimited(fragmentLabel(f), f.text);
}

export function renderRelatedEntity(e: ContextEntity): string {
  // A title can read as an instruction: neutralising it alone marks it without flagging keys
  // such as `user:alice` that merely resemble a role marker at the start of a line.
  const title = neutralizeUntrusted(sanitizeLabel(e.title));
  const source = e.sourcePath ? ` — ${sanitizeLabel(e.sourcePath)}` : '';
  return `- [${sanitizeLabel(e.key)}] (${sanitizeLabel(e.kind)}) ${title}${source} (distance ${e.distance})`;
}

/** Empty when there is nothing to show, so callers can tell "no context" apart. */
export function renderSearchContext(fragments: ContextFragment[], related: ContextEntity[]): string {
  if (fragments.length === 0 && related.length === 0) return '';
  const out = [CONTEXT_BANNER];
  if (fragments.length > 0) {
    out.push('', SECTION_HEADERS.documents);
    for (const f of fragments) out.push('', renderFragment(f));
  }
  if (related.length > 0) {
    out.push('', SECTION_HEADERS.relatedEntities);
    for (const e of related) out.push(renderRelatedEntity(e));
  }
  return `${out.join('\n')}\n`;
}
