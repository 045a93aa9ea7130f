import type { Queryable } from '../db/database.js';
import { visibleTo } from './visibility.js';

export type EvidenceClass = 'ASSERTED' | 'EXTRACTED' | 'INFERRED' | 'DERIVED';
export type FactStatus = 'ACTIVE' | 'SUPERSEDED' | 'RETRACTED' | 'EVIDENCE_LOST';

export interface FactRow {
  namespace: string;
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  evidence: EvidenceClass;
  confidence: number;
  status: FactStatus;
  conflict: boolean;
  conflictsWith: string[];
  supersedes: string | null;
  supersededBy: string | null;
  observationIds: string[];
  sourcePath: string | null;
  scopes: string[];
  visibility: string[];
  attributes: Record<string, unknown>;
  statusReason: string | null;
}

export const FACT_COLUMNS = `
  f.namespace, f.fact_id AS "factId", f.subject, f.predicate, f.object,
  f.valid_from AS "validFrom", f.valid_to AS "validTo", f.recorded_at AS "recordedAt",
  f.evidence, f.confidence, f.status, f.conflict, f.conflicts_with AS "conflictsWith",
  f.supersedes, f.superseded_by AS "supersededBy", f.observation_ids AS "observationIds",
  f.source_path AS "sourcePath", f.scopes, f.visibility, f.attributes, f.status_reason AS "statusReason"`;

/** Rows in the order of `factIds`; null where absent or invisible. */
export async function findFactsByIds(
  q: Queryable,
  namespace: string,
  factIds: readonly string[],
  visibleScopes: string[] | null,
): Promise<(FactRow | null)[]> {
  const { rows } = await q.query<FactRow>(
    `/* findFactsByIds */
     SELECT ${FACT_COLUMNS} FROM facts f
     WHERE f.namespace = $1 AND f.fact_id = ANY($2::text[]) AND ${visibleTo('f', '$3')}`,
    [namespace, factIds, visibleScopes],
  );
  const byId = new Map(rows.map((r) => [r.factId, r]));
  return factIds.map((id) => byId.get(id) ?? null);
}
