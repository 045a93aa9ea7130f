-- Learning from text. Per-namespace switches live in one JSON column of the settings
-- ({rules, model, modelName, sendPii, tokenBudget, concurrency}); absent keys take defaults.
ALTER TABLE namespace_settings ADD COLUMN IF NOT EXISTS extraction jsonb;

-- The durable queue of model extraction: one row per observation or document section, claimed
-- in batches per session (batch_key) with FOR UPDATE SKIP LOCKED. A row survives restarts; a
-- claim whose worker died is taken again once its lease (locked_until) has passed.
CREATE TABLE IF NOT EXISTS extraction_jobs (
  namespace text NOT NULL,
  job_id text NOT NULL,
  source_kind text NOT NULL,
  source_id text NOT NULL,
  source_ord integer NOT NULL DEFAULT 0,
  batch_key text NOT NULL,
  occurred_at timestamptz,
  status text NOT NULL DEFAULT 'QUEUED',
  attempts integer NOT NULL DEFAULT 0,
  run_after timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  locked_by text,
  last_error text,
  tokens_in integer NOT NULL DEFAULT 0,
  tokens_out integer NOT NULL DEFAULT 0,
  facts_written integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, job_id)
);
CREATE INDEX IF NOT EXISTS extraction_jobs_ready_idx ON extraction_jobs (status, run_after);
CREATE INDEX IF NOT EXISTS extraction_jobs_batch_idx ON extraction_jobs (namespace, batch_key, status);
