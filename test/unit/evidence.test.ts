import { describe, expect, it } from 'vitest';
import {
  afterEvidenceRemoval,
  EVIDENCE_LOST,
  evidenceRank,
  isServable,
  parseEvidenceClass,
  reinforce,
  strongerEvidence,
} from '../../src/domain/evidence.js';

describe('evidence ranks', () => {
  it('ranks ASSERTED 3, EXTRACTED 2, INFERRED and DERIVED 1, lost evidence 0', () => {
    expect(evidenceRank('ASSERTED')).toBe(3);
    expect(evidenceRank('EXTRACTED')).toBe(2);
    expect(evidenceRank('INFERRED')).toBe(1);
    expect(evidenceRank('DERIVED')).toBe(1);
    expect(evidenceRank(EVIDENCE_LOST)).toBe(0);
  });

  it('parses any letter case and rejects unknown classes', () => {
    expect(parseEvidenceClass('asserted')).toBe('ASSERTED');
    expect(parseEvidenceClass(' Extracted ')).toBe('EXTRACTED');
    expect(parseEvidenceClass('guessed')).toBeNull();
  });

  it('keeps the first class on a tie so the class does not flip', () => {
    expect(strongerEvidence('INFERRED', 'ASSERTED')).toBe('ASSERTED');
    expect(strongerEvidence('INFERRED', 'DERIVED')).toBe('INFERRED');
  });

  it('never serves a fact whose evidence is lost', () => {
    expect(isServable('INFERRED')).toBe(true);
    expect(isServable(EVIDENCE_LOST)).toBe(false);
  });
});

describe('reinforce', () => {
  const current = { observationIds: ['obs-1'], confidence: 0.6, evidence: 'INFERRED' as const };

  it('appends the new observation, raises confidence to the max and keeps the stronger class', () => {
    expect(reinforce(current, { observationId: 'obs-2', confidence: 0.9, evidence: 'ASSERTED' })).toEqual({
      observationIds: ['obs-1', 'obs-2'],
      confidence: 0.9,
      evidence: 'ASSERTED',
    });
  });

  it('is idempotent for an observation it already cites and never lowers confidence', () => {
    expect(reinforce(current, { observationId: 'obs-1', confidence: 0.2, evidence: 'DERIVED' })).toEqual(
      current,
    );
  });
});

describe('afterEvidenceRemoval', () => {
  it('drops removed observations and keeps the class while some remain', () => {
    expect(afterEvidenceRemoval({ observationIds: ['a', 'b'], evidence: 'ASSERTED' }, ['a'])).toEqual({
      observationIds: ['b'],
      evidence: 'ASSERTED',
    });
  });

  it('marks the fact EVIDENCE_LOST when its last observation goes', () => {
    expect(afterEvidenceRemoval({ observationIds: ['a'], evidence: 'ASSERTED' }, ['a']).evidence).toBe(
      EVIDENCE_LOST,
    );
  });

  it('leaves a fact that never cited observations alone', () => {
    expect(afterEvidenceRemoval({ observationIds: [], evidence: 'ASSERTED' }, ['a']).evidence).toBe(
      'ASSERTED',
    );
  });
});
