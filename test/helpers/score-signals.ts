/** The additive terms of a ranked item's score, as the ScoreSignals type reports them. */
export interface ScoreTerms {
  rrf: number;
  exactId: number;
  entity: number;
  scope: number;
  current: number;
  evidence: number;
  freshness: number;
  label: number;
  terms: number;
  asking: number;
  newer: number;
}

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
    r.newer
  );
}
