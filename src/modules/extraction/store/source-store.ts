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
