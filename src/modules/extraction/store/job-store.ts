import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';

/**
 * The model-extraction queue (table extraction_jobs). A job is one observation or document
 * section; a worker claims the ready jobs of one batch key (a session or stream) together with
 * FOR UPDATE SKIP LOCKED, holds them under a lease, and settles them in the transaction that
 * writes their facts. A worker killed mid-batch leaves RUNNING rows whose lease runs out: they
 * are claimed again and, fact ids being deterministic, written once.
 */

export type JobStatus = 'QUEUED' | 'RUNNING' | 'DONE' | 'DEAD';

export interface JobWrite {
  jobId: string;
  sourceKind: 'observation' | 'document';
  sourceId: string;
  sourceOrd: number;
  batchKey: string;
  occurredAt: Date | null;
}

export interface ClaimedJob extends JobWrite {
  namespace: string;
  attempts: number;
}

/**
 * Queues jobs unless the namespace turned model extraction off; an existing job is left as it
 * is (a repeat of the write changes nothing). One statement.
 */
export async function enqueueJobs(q: Queryable, namespace: string, jobs: readonly JobWrite[]): Promise<void> {
  if (jobs.length === 0) return;
  const payload = JSON.stringify(
    jobs.map((j) => ({
      job_id: j.jobId,
      source_kind: j.sourceKind,
      source_id: j.sourceId,
      source_ord: j.sourceOrd,
      batch_key: j.batchKey,
      occurred_at: j.occurredAt?.toISOString() ?? null,
    })),
  );
  await run(
    q,
    sql`/* enqueueExtractionJobs */
     INSERT INTO extraction_jobs (namespace, job_id, source_kind, source_id, source_ord, batch_key, occurred_at)
     SELECT ${namespace}, j.job_id, j.source_kind, j.source_id, j.source_ord, j.batch_key, j.occurred_at
     FROM jsonb_to_recordset(${payload}::jsonb)
       AS j(job_id text, source_kind text, source_id text, source_ord int, batch_key text, occurred_at timestamptz)
     WHERE NOT EXISTS (SELECT 1 FROM namespace_settings s
                       WHERE s.namespace = ${namespace} AND (s.extraction->>'model')::boolean IS FALSE)
     ON CONFLICT (namespace, job_id) DO NOTHING`,
  );
}

/**
 * Claims the ready jobs of one batch key (oldest first), at most `limit`, for `leaseSeconds`,
 * skipping namespaces already running their concurrency's worth of batches. One statement.
 */
export async function claimBatch(
  q: Queryable,
  options: { workerId: string; limit: number; leaseSeconds: number; namespace: string | null },
): Promise<ClaimedJob[]> {
  const only = options.namespace === null ? sql`` : sql`AND j.namespace = ${options.namespace}`;
  const { rows } = await run<ClaimedJob>(
    q,
    sql`/* claimExtractionBatch */
     WITH head AS (
       SELECT j.namespace, j.batch_key FROM extraction_jobs j
       WHERE (j.status = 'QUEUED' OR (j.status = 'RUNNING' AND j.locked_until < now()))
         AND j.run_after <= now() ${only}
         AND (SELECT count(DISTINCT r.batch_key) FROM extraction_jobs r
              WHERE r.namespace = j.namespace AND r.status = 'RUNNING' AND r.locked_until >= now())
             < coalesce((SELECT (s.extraction->>'concurrency')::int FROM namespace_settings s
                         WHERE s.namespace = j.namespace), 2)
       ORDER BY j.run_after, j.created_at
       LIMIT 1
       FOR UPDATE SKIP LOCKED
     ), picked AS (
       SELECT j.namespace, j.job_id FROM extraction_jobs j JOIN head h
         ON j.namespace = h.namespace AND j.batch_key = h.batch_key
       WHERE (j.status = 'QUEUED' OR (j.status = 'RUNNING' AND j.locked_until < now())) AND j.run_after <= now()
       ORDER BY j.occurred_at NULLS LAST, j.source_ord, j.job_id
       LIMIT ${options.limit}
       FOR UPDATE OF j SKIP LOCKED
     )
     UPDATE extraction_jobs j
     SET status = 'RUNNING', attempts = j.attempts + 1, locked_by = ${options.workerId},
         locked_until = now() + make_interval(secs => ${options.leaseSeconds}), updated_at = now()
     FROM picked p
     WHERE j.namespace = p.namespace AND j.job_id = p.job_id
     RETURNING j.namespace, j.job_id AS "jobId", j.source_kind AS "sourceKind", j.source_id AS "sourceId",
               j.source_ord AS "sourceOrd", j.batch_key AS "batchKey", j.occurred_at AS "occurredAt", j.attempts`,
  );
  return rows.sort((a, b) => (a.occurredAt?.getTime() ?? 0) - (b.occurredAt?.getTime() ?? 0));
}

export interface JobSettlement {
  jobId: string;
  tokensIn: number;
  tokensOut: number;
  factsWritten: number;
  note: string | null;
}

/** Marks claimed jobs DONE with what they cost and wrote; only while this worker holds them. */
export async function finishJobs(
  q: Queryable,
  namespace: string,
  workerId: string,
  settled: readonly JobSettlement[],
): Promise<number> {
  if (settled.length === 0) return 0;
  const payload = JSON.stringify(
    settled.map((s) => ({
      job_id: s.jobId,
      tokens_in: s.tokensIn,
      tokens_out: s.tokensOut,
      facts: s.factsWritten,
      note: s.note,
    })),
  );
  const { rowCount } = await run(
    q,
    sql`/* finishExtractionJobs */
     UPDATE extraction_jobs j
     SET status = 'DONE', tokens_in = j.tokens_in + s.tokens_in, tokens_out = j.tokens_out + s.tokens_out,
         facts_written = s.facts, last_error = s.note, locked_until = NULL, locked_by = NULL, updated_at = now()
     FROM jsonb_to_recordset(${payload}::jsonb) AS s(job_id text, tokens_in int, tokens_out int, facts int, note text)
     WHERE j.namespace = ${namespace} AND j.job_id = s.job_id AND j.status = 'RUNNING' AND j.locked_by = ${workerId}`,
  );
  return rowCount;
}

/**
 * Gives claimed jobs back: QUEUED again after `delaySeconds`, or DEAD with the reason once they
 * have had `maxAttempts` tries. `countAttempt` false (a rate limit, a spent budget) returns the
 * try the claim took. Tokens a failed call still cost are added.
 */
export async function releaseJobs(
  q: Queryable,
  namespace: string,
  workerId: string,
  jobIds: readonly string[],
  release: {
    delaySeconds: number;
    reason: string;
    maxAttempts: number;
    countAttempt: boolean;
    tokensIn: number;
    tokensOut: number;
  },
): Promise<{ dead: number }> {
  if (jobIds.length === 0) return { dead: 0 };
  const { rows } = await run<{ status: string }>(
    q,
    sql`/* releaseExtractionJobs */
     WITH given AS (
       SELECT j.namespace, j.job_id, j.attempts - CASE WHEN ${release.countAttempt} THEN 0 ELSE 1 END AS attempts
       FROM extraction_jobs j
       WHERE j.namespace = ${namespace} AND j.job_id = ANY(${[...jobIds]}::text[]) AND j.status = 'RUNNING'
         AND j.locked_by = ${workerId}
     )
     UPDATE extraction_jobs j
     SET attempts = g.attempts,
         status = CASE WHEN g.attempts >= ${release.maxAttempts} THEN 'DEAD' ELSE 'QUEUED' END,
         run_after = now() + make_interval(secs => ${release.delaySeconds}),
         last_error = ${release.reason}, locked_until = NULL, locked_by = NULL, updated_at = now(),
         tokens_in = j.tokens_in + ${release.tokensIn}::int / greatest(1, ${jobIds.length}::int),
         tokens_out = j.tokens_out + ${release.tokensOut}::int / greatest(1, ${jobIds.length}::int)
     FROM given g
     WHERE j.namespace = g.namespace AND j.job_id = g.job_id
     RETURNING j.status`,
  );
  return { dead: rows.filter((r) => r.status === 'DEAD').length };
}

/**
 * Jobs left RUNNING by a process that is gone, queued again at once (their attempt stays
 * counted). Only for a database one process owns (an embedded data folder): elsewhere another
 * live gateway may hold the lease, which then simply runs out.
 */
export async function releaseOrphanedJobs(q: Queryable): Promise<number> {
  const { rows } = await run<{ n: number }>(
    q,
    sql`/* releaseOrphanedExtractionJobs */
     WITH released AS (
       UPDATE extraction_jobs SET status = 'QUEUED', run_after = now(), locked_until = NULL, locked_by = NULL,
              updated_at = now()
       WHERE status = 'RUNNING'
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM released`,
  );
  return rows[0]?.n ?? 0;
}

/** Tokens (in + out) the namespace's jobs spent in the last 24 hours. */
export async function tokensSpentToday(q: Queryable, namespace: string): Promise<number> {
  const { rows } = await run<{ spent: number }>(
    q,
    sql`/* extractionTokensSpentToday */
     SELECT coalesce(sum(tokens_in + tokens_out), 0)::int AS spent FROM extraction_jobs
     WHERE namespace = ${namespace} AND updated_at > now() - interval '24 hours'`,
  );
  return rows[0]?.spent ?? 0;
}

export interface JobStatusSummary {
  queued: number;
  running: number;
  done: number;
  dead: number;
  tokensIn: number;
  tokensOut: number;
  factsWritten: number;
  failures: { reason: string; count: number }[];
}

/** Counts by status, tokens and facts, and the reasons jobs died or were retried. One statement. */
export async function summariseJobs(q: Queryable, namespace: string): Promise<JobStatusSummary> {
  const { rows } = await run<JobStatusSummary>(
    q,
    sql`/* summariseExtractionJobs */
     SELECT count(*) FILTER (WHERE status = 'QUEUED')::int AS queued,
            count(*) FILTER (WHERE status = 'RUNNING')::int AS running,
            count(*) FILTER (WHERE status = 'DONE')::int AS done,
            count(*) FILTER (WHERE status = 'DEAD')::int AS dead,
            coalesce(sum(tokens_in), 0)::int AS "tokensIn",
            coalesce(sum(tokens_out), 0)::int AS "tokensOut",
            coalesce(sum(facts_written), 0)::int AS "factsWritten",
            coalesce((SELECT jsonb_agg(jsonb_build_object('reason', f.reason, 'count', f.n) ORDER BY f.n DESC)
                      FROM (SELECT last_error AS reason, count(*)::int AS n FROM extraction_jobs
                            WHERE namespace = ${namespace} AND last_error IS NOT NULL AND status <> 'DONE'
                            GROUP BY last_error ORDER BY count(*) DESC LIMIT 20) f), '[]'::jsonb) AS failures
     FROM extraction_jobs WHERE namespace = ${namespace}`,
  );
  return rows[0]!;
}

/**
 * Queues every observation of the namespace recorded since `since` (null: all) again, also the
 * ones done or dead before: what `memgate extract` re-runs. Returns how many.
 */
export async function requeueObservations(
  q: Queryable,
  namespace: string,
  since: Date | null,
): Promise<number> {
  const { rowCount } = await run(
    q,
    sql`/* requeueObservationExtraction */
     INSERT INTO extraction_jobs (namespace, job_id, source_kind, source_id, source_ord, batch_key, occurred_at)
     SELECT o.namespace, 'obs:' || o.observation_id, 'observation', o.observation_id, 0,
            coalesce(o.session_id, o.observation_id), o.occurred_at
     FROM observations o
     WHERE o.namespace = ${namespace} AND o.status <> 'REDACTED' AND coalesce(o.content, '') <> ''
       AND (${since}::timestamptz IS NULL OR o.recorded_at >= ${since}::timestamptz)
     ON CONFLICT (namespace, job_id) DO UPDATE
       SET status = 'QUEUED', attempts = 0, run_after = now(), last_error = NULL, locked_until = NULL,
           locked_by = NULL, updated_at = now()
       WHERE extraction_jobs.status <> 'RUNNING'`,
  );
  return rowCount;
}

export interface QueueGauges {
  queued: number;
  running: number;
  dead: number;
  /** Seconds since the oldest queued job was queued; 0 with none queued. */
  oldestQueuedSeconds: number;
}

/**
 * The queue across namespaces, for operators' metrics (no namespace is reported): jobs waiting,
 * claimed and given up, and the age of the oldest waiting one. One statement on the status index.
 */
export async function readQueueGauges(q: Queryable): Promise<QueueGauges> {
  const { rows } = await run<QueueGauges>(
    q,
    sql`/* extractionQueueGauges */
     SELECT count(*) FILTER (WHERE status = 'QUEUED')::int AS queued,
            count(*) FILTER (WHERE status = 'RUNNING')::int AS running,
            count(*) FILTER (WHERE status = 'DEAD')::int AS dead,
            coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'QUEUED')), 0)::float8
              AS "oldestQueuedSeconds"
     FROM extraction_jobs WHERE status IN ('QUEUED', 'RUNNING', 'DEAD')`,
  );
  return rows[0] ?? { queued: 0, running: 0, dead: 0, oldestQueuedSeconds: 0 };
}
