import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';

/** The text a job reads, with what its facts inherit (scopes, time, path). */
export interface JobSource {
  jobId: string;
  text: string;
  actor: string | null;
  scopes: string[];
  visibility: string[];
  occurredAt: Date;
  observationId: string | null;
  sourcePath: string | null;
}

/**
 * The texts of claimed jobs in one statement: an observation's content (a redacted one reads as
 * nothing, so its job writes nothing), a document section's text under its title and heading.
 */
export async function loadJobSources(
  q: Queryable,
  namespace: string,
  jobs: readonly { jobId: string; sourceKind: string; sourceId: string; sourceOrd: number }[],
): Promise<JobSource[]> {
  if (jobs.length === 0) return [];
  const payload = JSON.stringify(
    jobs.map((j) => ({ job_id: j.jobId, kind: j.sourceKind, id: j.sourceId, ord: j.sourceOrd })),
  );
  const { rows } = await run<JobSource>(
    q,
    sql`/* loadExtractionSources */
     WITH j AS (
       SELECT * FROM jsonb_to_recordset(${payload}::jsonb) AS x(job_id text, kind text, id text, ord int)
     )
     SELECT j.job_id AS "jobId", o.content AS text,
            coalesce(a.title, o.actor_id) AS actor, o.scopes, o.visibility, o.occurred_at AS "occurredAt",
            o.observation_id AS "observationId", o.provenance->>'uri' AS "sourcePath"
     FROM j JOIN observations o ON o.namespace = ${namespace} AND o.observation_id = j.id
     LEFT JOIN entities a ON a.namespace = o.namespace AND a.key = o.actor_id AND cardinality(a.visibility) = 0
     WHERE j.kind = 'observation' AND o.status <> 'REDACTED' AND coalesce(o.content, '') <> ''
     UNION ALL
     SELECT j.job_id, concat_ws(E'\\n', c.title, c.heading, c.text), NULL, c.scopes, c.visibility,
            c.created_at, NULL, c.source_path
     FROM j JOIN chunks c ON c.namespace = ${namespace} AND c.node_key = j.id AND c.ord = j.ord
     WHERE j.kind = 'document'`,
  );
  return rows;
}

/** A page of a namespace's observations with text, in recording order (for re-extraction). */
export async function pageObservationsToRead(
  q: Queryable,
  namespace: string,
  since: Date | null,
  after: { recordedAt: Date; observationId: string } | null,
  limit: number,
): Promise<
  {
    observationId: string;
    content: string;
    scopes: string[];
    visibility: string[];
    occurredAt: Date;
    recordedAt: Date;
    sessionId: string | null;
    provenance: unknown;
  }[]
> {
  const { rows } = await run<{
    observationId: string;
    content: string;
    scopes: string[];
    visibility: string[];
    occurredAt: Date;
    recordedAt: Date;
    sessionId: string | null;
    provenance: unknown;
  }>(
    q,
    sql`/* pageObservationsToRead */
     SELECT o.observation_id AS "observationId", o.content, o.scopes, o.visibility, o.occurred_at AS "occurredAt",
            o.recorded_at AS "recordedAt", o.session_id AS "sessionId", o.provenance
     FROM observations o
     WHERE o.namespace = ${namespace} AND o.status <> 'REDACTED' AND coalesce(o.content, '') <> ''
       AND (${since}::timestamptz IS NULL OR o.recorded_at >= ${since}::timestamptz)
       AND (${after?.recordedAt ?? null}::timestamptz IS NULL
            OR (o.recorded_at, o.observation_id) > (${after?.recordedAt ?? null}::timestamptz, ${after?.observationId ?? ''}))
     ORDER BY o.recorded_at, o.observation_id
     LIMIT ${limit}`,
  );
  return rows;
}

/** How many observations `pageObservationsToRead` would page through (for a progress bar). */
export async function countObservationsToRead(
  q: Queryable,
  namespace: string,
  since: Date | null,
): Promise<number> {
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* countObservationsToRead */
     SELECT count(*)::int AS n FROM observations o
     WHERE o.namespace = ${namespace} AND o.status <> 'REDACTED' AND coalesce(o.content, '') <> ''
       AND (${since}::timestamptz IS NULL OR o.recorded_at >= ${since}::timestamptz)`,
  );
  return rows[0]?.n ?? 0;
}

/** Facts of a namespace read from text (EXTRACTED or INFERRED), for the evaluation harness. */
export async function listLearnedFacts(
  q: Queryable,
  namespace: string,
): Promise<
  { subject: string; predicate: string; object: string; evidence: string; observationIds: string[] }[]
> {
  const { rows } = await run<{
    subject: string;
    predicate: string;
    object: string;
    evidence: string;
    observationIds: string[];
  }>(
    q,
    sql`/* listLearnedFacts */
     SELECT f.subject, f.predicate, f.object, f.evidence, f.observation_ids AS "observationIds"
     FROM facts f
     WHERE f.namespace = ${namespace} AND f.evidence IN ('EXTRACTED', 'INFERRED') AND f.status <> 'RETRACTED'
     ORDER BY f.subject, f.predicate, f.object`,
  );
  return rows;
}
