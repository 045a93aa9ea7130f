import { z } from 'zod';
import { maskPii } from '../../domain/pii.js';
import { salientLine } from '../../domain/salient-text.js';
import { type Llm, parseJsonReply, withDeadline } from '../../providers/llm.js';
import type { SummaryMaterial } from './summary-material.js';
import { SUMMARY_MAX_CHARS, type SummaryDraft, day, namesOf, statedAttributes } from './summary-text.js';

/**
 * A summary written by the model from the same material as the extractive one: the statements the
 * extractive draft rests on, each tagged (A attributes, F facts, N notes); the model writes at most
 * ~120 words citing the tags it uses, and the summary rests on exactly the facts and notes it
 * cites. A reply that cites an unknown tag, cites nothing, or is too long is refused, and so is
 * any failure (timeout, HTTP error, bad JSON): the extractive draft is kept and the reason logged.
 * Personal data is masked before it leaves unless the namespace allows sending it.
 */

const replySchema = z.object({ summary: z.string().min(1), cites: z.array(z.string()).default([]) });

const REPLY_JSON_SCHEMA = {
  type: 'object',
  properties: { summary: { type: 'string' }, cites: { type: 'array', items: { type: 'string' } } },
  required: ['summary', 'cites'],
  additionalProperties: false,
} as const;

interface Tagged {
  tag: string;
  text: string;
  fact?: string;
  observation?: string;
}

/** The draft's statements, tagged, in the draft's order. */
export function taggedStatements(m: SummaryMaterial, draft: SummaryDraft): Tagged[] {
  const attrs = statedAttributes(m.entity.attributes).map(([k, v], i) => ({
    tag: `A${i + 1}`,
    text: `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`,
  }));
  const facts = draft.sources.facts
    .map((id) => m.facts.find((f) => f.factId === id))
    .filter((f) => f !== undefined)
    .map((f, i) => ({
      tag: `F${i + 1}`,
      fact: f.factId,
      text: f.outgoing
        ? `${m.entity.title} ${f.predicate} ${f.otherTitle} (since ${day(f.validFrom)})`
        : `${f.otherTitle} ${f.predicate} ${m.entity.title} (since ${day(f.validFrom)})`,
    }));
  const about = namesOf(m.entity.title, m.entity.key);
  const notes = draft.sources.observations
    .map((id) => m.notes.find((n) => n.observationId === id))
    .filter((n) => n !== undefined)
    .map((n, i) => ({
      tag: `N${i + 1}`,
      observation: n.observationId,
      text: `${day(n.occurredAt)}${n.actor ? ` (${n.actor})` : ''}: ${salientLine(n.content, 400, about) ?? ''}`,
    }));
  return [...attrs, ...facts, ...notes];
}

export function summaryPrompt(m: SummaryMaterial, statements: readonly Tagged[], sendPii: boolean) {
  const show = (t: string) => (sendPii ? t : maskPii(t));
  return [
    {
      role: 'system' as const,
      content:
        'You summarise what a memory knows about one entity now, for an AI agent. Use only the numbered statements. ' +
        'Write at most 120 words of plain prose; after each claim cite the statements it rests on as [A1], [F2], [N3]. ' +
        'Attributes and facts hold now; notes are dated messages. Never present an older note as current when a fact ' +
        'or a newer note says otherwise. Answer with JSON: {"summary": string, "cites": [tags you cited]}.',
    },
    {
      role: 'user' as const,
      content: [
        `Entity: ${show(m.entity.title)} (${m.entity.kind})`,
        ...statements.map((s) => `[${s.tag}] ${show(s.text)}`),
      ].join('\n'),
    },
  ];
}

/** The model's summary, checked against the tags; throws on anything not usable. */
export function acceptReply(reply: string, statements: readonly Tagged[]): { text: string; cited: Tagged[] } {
  const parsed = parseJsonReply(reply, replySchema);
  const byTag = new Map(statements.map((s) => [s.tag, s]));
  const inText = [...parsed.summary.matchAll(/\[([AFN]\d+)\]/g)].map((x) => x[1]!);
  const tags = [...new Set([...parsed.cites.map((c) => c.replace(/[[\]]/g, '')), ...inText])];
  if (tags.length === 0) throw new Error('the summary cites nothing');
  const unknown = tags.filter((t) => !byTag.has(t));
  if (unknown.length > 0) throw new Error(`the summary cites unknown statements: ${unknown.join(', ')}`);
  if (parsed.summary.length > SUMMARY_MAX_CHARS) throw new Error('the summary is too long');
  return { text: parsed.summary.trim(), cited: tags.map((t) => byTag.get(t)!) };
}

export interface ModelComposer {
  llm: Llm;
  model: string | null;
  timeoutMs: number;
  sendPii: boolean;
}

/** The model's version of `draft`, with the sources it cites; the header stays the rule's. */
export async function composeWithModel(
  m: SummaryMaterial,
  draft: SummaryDraft,
  composer: ModelComposer,
): Promise<SummaryDraft> {
  const statements = taggedStatements(m, draft);
  const options = {
    temperature: 0,
    timeoutMs: composer.timeoutMs,
    jsonSchema: { name: 'entity_summary', schema: REPLY_JSON_SCHEMA },
    ...(composer.model ? { model: composer.model } : {}),
  };
  const reply = await withDeadline(
    composer.llm.chat(summaryPrompt(m, statements, composer.sendPii), options),
    composer.timeoutMs + 1000,
  );
  const { text, cited } = acceptReply(reply, statements);
  const header = draft.text.split('\n')[0]!;
  return {
    text: `${header}\n${text}`,
    sources: {
      facts: cited.flatMap((c) => (c.fact ? [c.fact] : [])),
      observations: cited.flatMap((c) => (c.observation ? [c.observation] : [])),
    },
  };
}
