import {
  CONTEXT_BANNER,
  SECTION_HEADERS,
  neutralizeUntrusted,
  renderDelimited,
  sanitizeLabel,
} from '../../../domain/untrusted-text.js';
import { CHUNK_SECTION_HEADERS, type ChunkSection } from './chunk-section.js';

/**
 * Search results rendered for a prompt: the found fragments, numbered so an answer can cite
 * them as [n], each fenced with its key, title, heading and source, under the section a context
 * pack shows them in (episodes, documents, observations such as chat messages); then the
 * related entities of the graph. Every piece of stored text is untrusted: bodies go through
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
  /** What the text is: the section it is listed under (chunk-section.ts). */
  section: ChunkSection;
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
  // Each section keeps the fragments' rank order; their numbers stay those of the hits.
  for (const [section, header] of Object.entries(CHUNK_SECTION_HEADERS)) {
    const inSection = fragments.filter((f) => f.section === section);
    if (inSection.length === 0) continue;
    out.push('', SECTION_HEADERS[header]);
    for (const f of inSection) out.push('', renderFragment(f));
  }
  if (related.length > 0) {
    out.push('', SECTION_HEADERS.relatedEntities);
    for (const e of related) out.push(renderRelatedEntity(e));
  }
  return `${out.join('\n')}\n`;
}
