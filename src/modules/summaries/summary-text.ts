import { cutAtWord, salientLine } from '../../domain/salient-text.js';
import type { SummaryFact, SummaryMaterial, SummaryNote, SummarySources } from './summary-material.js';

/**
 * The extractive summary of an entity, deterministic (the same material gives the same text):
 *
 *   <title> (<kind>), as of <day>:
 *   - <attribute>: <value>                     every attribute in force, by name
 *   - <predicate>: <object>, <object>          facts valid then where the entity is the subject,
 *   - <subject>, <subject> <predicate> <title>   then where it is the object, each group by
 *                                               predicate; newest first inside a group
 *   Latest notes:
 *   - <day> (<actor>): <salient sentences>     observations that mention it, newest first
 *
 * Only what holds at the instant is stated as holding: superseded or closed facts and old
 * attribute versions are not in the material at all. Notes are dated quotes, not state. A fact in
 * conflict with another version says so. Under the cap, notes go first (oldest first), then
 * values beyond the first few of a group; the header and the attributes always stay.
 */

export const SUMMARY_MAX_CHARS = 1500;
const VALUE_CHARS = 120;
const NOTE_CHARS = 220;
const MAX_NOTES = 5;
const VALUES_PER_GROUP = 6;

export interface SummaryDraft {
  text: string;
  sources: SummarySources;
}

/** The day of an ISO instant, as summaries date things. */
export const day = (iso: string) => iso.slice(0, 10);

function valueText(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return cutAtWord(text.replace(/\s+/g, ' ').trim(), VALUE_CHARS);
}

/** The attributes a summary states, by name: set (not null or empty) and not internal (`_…`). */
export function statedAttributes(attributes: Record<string, unknown> | null): [string, unknown][] {
  if (!attributes) return [];
  return Object.keys(attributes)
    .filter((k) => attributes[k] !== null && attributes[k] !== '' && !k.startsWith('_'))
    .sort()
    .map((k) => [k, attributes[k]]);
}

function attributeLines(attributes: Record<string, unknown> | null): string[] {
  return statedAttributes(attributes).map(([k, v]) => `- ${k}: ${valueText(v)}`);
}

interface FactGroup {
  predicate: string;
  outgoing: boolean;
  facts: SummaryFact[];
}

/** Facts grouped by direction and predicate; each group newest first (then by id). */
function factGroups(facts: readonly SummaryFact[]): FactGroup[] {
  const groups = new Map<string, FactGroup>();
  for (const f of facts) {
    const id = `${f.outgoing ? 0 : 1}\u0000${f.predicate}`;
    const g = groups.get(id) ?? { predicate: f.predicate, outgoing: f.outgoing, facts: [] };
    g.facts.push(f);
    groups.set(id, g);
  }
  const byNewest = (a: SummaryFact, b: SummaryFact) =>
    b.validFrom.localeCompare(a.validFrom) || a.factId.localeCompare(b.factId);
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, g]) => ({ ...g, facts: [...g.facts].sort(byNewest) }));
}

function groupLine(g: FactGroup, title: string, limit: number): { line: string; used: SummaryFact[] } {
  const used = g.facts.slice(0, limit);
  const names = used.map((f) => `${f.otherTitle}${f.conflict ? ' (in conflict with another version)' : ''}`);
  const more = g.facts.length > used.length ? ` and ${g.facts.length - used.length} more` : '';
  const since = used.length === 1 ? ` (since ${day(used[0]!.validFrom)})` : '';
  const line = g.outgoing
    ? `- ${g.predicate}: ${names.join(', ')}${more}${since}`
    : `- ${names.join(', ')}${more} ${g.predicate} ${title}${since}`;
  return { line, used };
}

function noteLine(n: SummaryNote, about: readonly string[]): string | null {
  const text = salientLine(n.content, NOTE_CHARS, about);
  if (text === null) return null;
  return `- ${day(n.occurredAt)}${n.actor ? ` (${n.actor})` : ''}: ${text}`;
}

/** Names a note may call the entity by: its title, the title's first and last words, its key. */
export function namesOf(title: string, key: string): string[] {
  const words = title.split(/\s+/).filter((w) => w.length > 2);
  return [...new Set([title, words[0], words[words.length - 1], key.replace(/^[^:]*:/, '')])].filter(
    (n): n is string => typeof n === 'string' && n.length > 1,
  );
}

/** The summary of `m` as of `asOf`, or null when nothing is known of the entity then. */
export function summaryText(m: SummaryMaterial, asOf: Date): SummaryDraft | null {
  const attributes = attributeLines(m.entity.attributes);
  if (attributes.length === 0 && m.facts.length === 0 && m.notes.length === 0) return null;
  const header = `${m.entity.title} (${m.entity.kind}), as of ${day(asOf.toISOString())}:`;
  const about = namesOf(m.entity.title, m.entity.key);
  const notes = m.notes
    .slice(0, MAX_NOTES)
    .map((n) => ({ n, line: noteLine(n, about) }))
    .filter((x): x is { n: SummaryNote; line: string } => x.line !== null);
  const groups = factGroups(m.facts);
  for (let limit = VALUES_PER_GROUP; ; limit = Math.max(1, limit - 2)) {
    const lines = groups.map((g) => groupLine(g, m.entity.title, limit));
    for (let keep = notes.length; keep >= 0; keep--) {
      const kept = notes.slice(0, keep);
      const text = [
        header,
        ...attributes,
        ...lines.map((l) => l.line),
        ...(kept.length > 0 ? ['Latest notes:', ...kept.map((k) => k.line)] : []),
      ].join('\n');
      if (text.length <= SUMMARY_MAX_CHARS || (keep === 0 && limit === 1)) {
        return {
          text: cutAtWord(text, SUMMARY_MAX_CHARS),
          sources: {
            facts: lines.flatMap((l) => l.used.map((f) => f.factId)),
            observations: kept.map((k) => k.n.observationId),
          },
        };
      }
    }
  }
}
