import type { ScoreSignals } from '../../src/modules/retrieval/compiler/signals.js';

/** The additive terms of a ranked item's score: the ScoreSignals the server reports, minus the explanations. */
export type ScoreTerms = Omit<ScoreSignals, 'channels' | 'entities'>;

/** What a context item's score must equal: every signal it reports, summed. */
export function sumOfSignals(r: ScoreTerms): number {
  return (
    r.rrf +
    r.exactId +
    r.entity +
    r.scope +
    r.current +
    r.evidence +
    r.freshness +
    r.label +
    r.terms +
    r.asking +
    r.newer +
    r.state
  );
}
