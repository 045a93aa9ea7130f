/** What an entity's summary may rest on, as the material store reads it (as of one instant). */

export interface SummaryEntity {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  visibility: string[];
  scopes: string[];
  /** Attributes in force at the instant (null: none then). */
  attributes: Record<string, unknown> | null;
  pii: boolean;
  piiCategories: string[];
}

/** A fact valid at the instant with the summarised entity at one end. */
export interface SummaryFact {
  factId: string;
  /** The summarised entity. */
  entity: string;
  predicate: string;
  /** True when the entity is the subject; the other end is then the object. */
  outgoing: boolean;
  otherKey: string;
  otherTitle: string;
  validFrom: string;
  conflict: boolean;
  evidence: string;
  visibility: string[];
  otherVisibility: string[];
  /** The other end holds personal data. */
  otherPii: boolean;
  otherPiiCategories: string[];
}

/** A recent observation that mentions the summarised entity. */
export interface SummaryNote {
  observationId: string;
  entity: string;
  content: string;
  occurredAt: string;
  actor: string | null;
  visibility: string[];
  pii: boolean;
  piiCategories: string[];
}

export interface SummaryMaterial {
  entity: SummaryEntity;
  facts: SummaryFact[];
  notes: SummaryNote[];
}

/** The sources a summary rests on: every fact it states and every observation it quotes. */
export interface SummarySources {
  facts: string[];
  observations: string[];
}
