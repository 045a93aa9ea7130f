import type { Queryable } from '../db/database.js';
import { visibleTo } from './visibility.js';

export type ObservationStatus = 'RECEIVED' | 'PROCESSED' | 'PARTIALLY_PROCESSED' | 'FAILED' | 'REDACTED';

export interface ObservationRow {
  namespace: string;
  observationId: string;
  sourceSystem: string;
  sourceStream: string | null;
  sourceExternalId: string | null;
  kind: string;
  occurredAt: Date;
  recordedAt: Date;
  actorType: string | null;
  actorId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  scopes: string[];
  visibility: string[];
  content: string | null;
  data: unknown;
  provenance: unknown;
  status: ObservationStatus;
  statusReason: string | null;
  sessionId: string | null;
  pii: boolean;
  piiCategories: string[];
}

export const OBSERVATION_COLUMNS = `
  o.namespace, o.observation_id AS "observationId", o.source_system AS "sourceSystem",
  o.source_stream AS "sourceStream", o.source_external_id AS "sourceExternalId", o.kind,
  o.occurred_at AS "occurredAt", o.recorded_at AS "recordedAt", o.actor_type AS "actorType",
  o.actor_id AS "actorId", o.subject_type AS "subjectType", o.subject_id AS "subjectId",
  o.scopes, o.visibility, o.content, o.data, o.provenance, o.status, o.status_reason AS "statusReason",
  o.session_id AS "sessionId", o.pii, o.pii_categories AS "piiCategories"`;

/** Rows in the order of `ids`; null where absent or invisible. */
export async function findObservationsByIds(
  q: Queryable,
  namespace: string,
  ids: readonly string[],
  visibleScopes: string[] | null,
): Promise<(ObservationRow | null)[]> {
  const { rows } = await q.query<ObservationRow>(
    `/* findObservationsByIds */
     SELECT ${OBSERVATION_COLUMNS} FROM observations o
     WHERE o.namespace = $1 AND o.observation_id = ANY($2::text[]) AND ${visibleTo('o', '$3')}`,
    [namespace, ids, visibleScopes],
  );
  const byId = new Map(rows.map((r) => [r.observationId, r]));
  return ids.map((id) => byId.get(id) ?? null);
}
