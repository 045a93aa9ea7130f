/**
 * Evidence class of a fact: how it was obtained. It is a ranking signal, not truth.
 * ASSERTED — a source's structured statement; EXTRACTED — a deterministic rule;
 * INFERRED — an LLM reading of free text; DERIVED — consolidation (summary, merge).
 */
export const EVIDENCE_CLASSES = ['ASSERTED', 'EXTRACTED', 'INFERRED', 'DERIVED'] as const;
export type EvidenceClass = (typeof EVIDENCE_CLASSES)[number];

/** A fact whose every observation was redacted or purged: kept for audit, never served. */
export const EVIDENCE_LOST = 'EVIDENCE_LOST';
export type EvidenceState = EvidenceClass | typeof EVIDENCE_LOST;

export const EVIDENCE_RANK: Readonly<Record<EvidenceClass, number>> = {
  ASSERTED: 3,
  EXTRACTED: 2,
  INFERRED: 1,
  DERIVED: 1,
};

/** Rank used by scoring; lost evidence ranks 0. */
export function evidenceRank(evidence: EvidenceState): number {
  return evidence === EVIDENCE_LOST ? 0 : EVIDENCE_RANK[evidence];
}

export function isEvidenceClass(value: string): value is EvidenceClass {
  return (EVIDENCE_CLASSES as readonly string[]).includes(value);
}

/** Accepts any letter case (the seeds write `asserted`); null for anything else. */
export function parseEvidenceClass(value: string): EvidenceClass | null {
  const upper = value.trim().toUpperCase();
  return isEvidenceClass(upper) ? upper : null;
}

/** Only facts that still have evidence may appear in any answer. */
export function isServable(evidence: EvidenceState): boolean {
  return evidence !== EVIDENCE_LOST;
}

/**
 * The stronger of two classes. Ties keep `a`, so a fact's class does not flip between
 * INFERRED and DERIVED just because another observation arrived.
 */
export function strongerEvidence(a: EvidenceClass, b: EvidenceClass): EvidenceClass {
  return EVIDENCE_RANK[b] > EVIDENCE_RANK[a] ? b : a;
}

export interface FactSupport {
  observationIds: readonly string[];
  confidence: number;
  evidence: EvidenceClass;
}

/**
 * Asserting an existing fact again adds no edge: it appends the observation id (once),
 * raises confidence to the max and keeps the stronger evidence class.
 */
export function reinforce(
  current: FactSupport,
  incoming: { observationId?: string | null; confidence: number; evidence: EvidenceClass },
): FactSupport {
  const ids =
    incoming.observationId && !current.observationIds.includes(incoming.observationId)
      ? [...current.observationIds, incoming.observationId]
      : [...current.observationIds];
  return {
    observationIds: ids,
    confidence: Math.max(current.confidence, incoming.confidence),
    evidence: strongerEvidence(current.evidence, incoming.evidence),
  };
}

/**
 * What is left of a fact after some of its observations were redacted or purged: the
 * surviving ids, and EVIDENCE_LOST when none survive. A fact that never cited observations
 * (asserted directly) loses nothing.
 */
export function afterEvidenceRemoval(
  support: { observationIds: readonly string[]; evidence: EvidenceState },
  removedObservationIds: readonly string[],
): { observationIds: string[]; evidence: EvidenceState } {
  const removed = new Set(removedObservationIds);
  const remaining = support.observationIds.filter((id) => !removed.has(id));
  const lostAll = support.observationIds.length > 0 && remaining.length === 0;
  return { observationIds: remaining, evidence: lostAll ? EVIDENCE_LOST : support.evidence };
}
