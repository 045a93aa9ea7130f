import { builder } from './builder.js';

// Small closed vocabularies of the contract, kept together: each is a few words, not a type.
export const DirectionEnum = builder.enumType('Direction', { values: ['OUT', 'IN', 'BOTH'] as const });
export const EvidenceEnum = builder.enumType('Evidence', {
  values: ['ASSERTED', 'EXTRACTED', 'INFERRED', 'DERIVED'] as const,
});
export const FactStatusEnum = builder.enumType('FactStatus', {
  values: ['ACTIVE', 'SUPERSEDED', 'RETRACTED', 'EVIDENCE_LOST'] as const,
});
export const OriginEnum = builder.enumType('Origin', { values: ['VAULT', 'AGENT'] as const });
export const ObservationStatusEnum = builder.enumType('ObservationStatus', {
  values: ['RECEIVED', 'PROCESSED', 'PARTIALLY_PROCESSED', 'FAILED', 'REDACTED'] as const,
});
export const WriteStatusEnum = builder.enumType('WriteStatus', {
  values: ['CREATED', 'UPDATED', 'UNCHANGED', 'REINFORCED', 'DUPLICATE', 'PARTIAL', 'REJECTED'] as const,
});
export const MemoryChangeKindEnum = builder.enumType('MemoryChangeKind', {
  description: 'What a live change is about.',
  values: ['ENTITY', 'FACT', 'OBSERVATION', 'DOCUMENT'] as const,
});
