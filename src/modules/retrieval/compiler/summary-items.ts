/**
 * The SUMMARIES section: the stored summary (evidence DERIVED) of each entity the query asks for
 * or names whole, right after what holds now. It is read with the current state (no statement of
 * its own) and fitted to at most a quarter of the budget by whole lines, the header and the lines
 * that answer the query kept longest (the session compacts' rule). A pack for an instant before a
 * summary was built gets none: it states what held when it was built. Pure.
 */
import { globalId } from '../../../global-id.js';
import type { StateEntityRow } from '../store/current-state-store.js';
import { fitSummary } from '../session-summary.js';
import { candidateKey } from './candidates.js';
import { NO_SIGNALS, type StateRows } from './current-state.js';
import type { Scored } from './signals.js';

/** The most of the budget the section's summaries may take together. */
export const SUMMARY_BUDGET_SHARE = 0.25;

function summaryItem(entity: StateEntityRow, text: string, state: number): Scored {
  const s = entity.summary!;
  const id = String(s.chunkId);
  return {
    candidate: {
      key: candidateKey({ kind: 'chunk', namespace: entity.namespace, id }),
      kind: 'chunk',
      namespace: entity.namespace,
      localId: id,
      globalId: globalId('Chunk', entity.namespace, s.chunkId),
      section: 'SUMMARIES',
      title: `Summary of ${entity.title}`,
      text,
      sourcePath: null,
      scopes: s.scopes,
      time: new Date(s.builtAt),
      evidenceRank: 1,
      currentFact: false,
      conflict: false,
      conflictsWith: [],
      distance: null,
      identifiers: [entity.key],
      namedEntities: [],
      entityKeys: [entity.key],
      source: null,
      pii: s.pii,
    },
    score: state,
    signals: { ...NO_SIGNALS, state },
  };
}

/**
 * One item per entity with a summary, in the section's entity order; `cost` measures a text as
 * the pack would, `budget` is the pack's. An entity whose summary header alone exceeds its share
 * gets none.
 */
export function summaryItems(
  rows: StateRows,
  query: string,
  cost: (text: string) => number,
  budget: number,
): Scored[] {
  const withSummary = rows.entities.filter((e) => e.summary !== null);
  if (withSummary.length === 0) return [];
  const share = (budget * SUMMARY_BUDGET_SHARE) / withSummary.length;
  const out: Scored[] = [];
  for (const entity of withSummary) {
    const text = fitSummary(entity.summary!.text, query, (t) => cost(t) <= share);
    // Below the current state's items (whose state signal starts at 1).
    if (text !== null) out.push(summaryItem(entity, text, 0.5 - out.length / 1000));
  }
  return out;
}

/**
 * Summaries enter a pack through the SUMMARIES section only (the named entities', in what the
 * answers leave): one a channel or the multi-hop expansion brings would take an answer's place.
 * Search serves them as hits.
 */
export function withoutSummaries(scored: Scored[]): Scored[] {
  return scored.filter((s) => s.candidate.section !== 'SUMMARIES');
}
