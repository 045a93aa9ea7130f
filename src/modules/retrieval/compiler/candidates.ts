/**
 * Candidates of a compilation: what a channel hands over (a reference, phase 1:
 * retrieval/candidate-ref.ts, shared with search) and what phase 2 turns it into (the few columns packing needs). Pure types and helpers — no SQL here.
 */
import { collapseWhitespace } from '../../../domain/whitespace.js';
import { globalId } from '../../../global-id.js';
import type { CandidateKind } from '../pipeline/candidate-ref.js';

export const SECTION_KINDS = [
  'CURRENT',
  'CURRENT_STATE',
  'SUMMARIES',
  'RELEVANT_FACTS',
  'EPISODES',
  'DOCUMENTS',
  'RELATED_ENTITIES',
  'RECENT_OBSERVATIONS',
] as const;
export type SectionKind = (typeof SECTION_KINDS)[number];

export type { CandidateKind, CandidateRef } from '../pipeline/candidate-ref.js';
export { candidateKey, parseCandidateKey } from '../pipeline/candidate-ref.js';

const TYPENAME: Readonly<Record<CandidateKind, string>> = {
  fact: 'Fact',
  chunk: 'Chunk',
  observation: 'Observation',
  entity: 'Entity',
};

/** The Relay id of the stored thing behind a candidate, so `node(id)`/`provenance(id)` work on it. */
export function candidateGlobalId(kind: CandidateKind, namespace: string, id: string): string {
  return kind === 'chunk'
    ? globalId('Chunk', namespace, Number(id))
    : globalId(TYPENAME[kind], namespace, id);
}

/** A source an item rests on, as listed in `ContextPack.sources`. */
export interface SourceRefValue {
  key: string;
  title: string;
  sourcePath: string | null;
}

/** Phase 2: a candidate with exactly what scoring, packing and rendering need. */
export interface Candidate {
  key: string;
  kind: CandidateKind;
  namespace: string;
  /** Fact id, chunk id, observation id or entity key. */
  localId: string;
  globalId: string;
  section: Exclude<SectionKind, 'CURRENT'>;
  title: string | null;
  text: string;
  sourcePath: string | null;
  /** Every scope of the item (relevance and visibility). */
  scopes: string[];
  /** The instant freshness is measured from (validFrom, occurredAt, created/updated…). */
  time: Date | null;
  /** Evidence rank 0–3 (facts only). */
  evidenceRank: number;
  /** A fact whose interval is still open. */
  currentFact: boolean;
  /** A fact in an open conflict. */
  conflict: boolean;
  /** Fact ids of the other side(s) of the conflict. */
  conflictsWith: string[];
  /** Cosine distance to the query, null when the item has no semantic axis. */
  distance: number | null;
  /** Strings an exact identifier in the query may name (keys, ids). */
  identifiers: string[];
  /** Entities the query names that this item is linked to (the entity-name bonus). */
  namedEntities: string[];
  /** Entity keys this item is about (for multi-hop and sources). */
  entityKeys: string[];
  source: SourceRefValue | null;
  /** Carries personal data: masked for principals without the pii right. */
  pii: boolean;
}

/** A candidate excluded by a hard filter before any score (reported as BLOCKED). */
export interface BlockedCandidate {
  key: string;
  kind: CandidateKind;
  namespace: string;
  globalId: string;
  reason: BlockReason;
  /** Every scope of the item (the trace's visibility is derived from them). */
  scopes: string[];
}

export type BlockReason =
  | 'EVIDENCE_LOST'
  | 'SUPERSEDED'
  | 'RETRACTED'
  | 'NOT_VALID_AT_AS_OF'
  | 'OUT_OF_SCOPE';

/** Text used to detect the same source text reached twice (whitespace and case folded). */
export function dedupKey(text: string): string {
  return collapseWhitespace(text.normalize('NFKC').toLowerCase()).trim();
}
