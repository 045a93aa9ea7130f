-- 001_core: the complete table set of the knowledge model (DESIGN §1–2).
-- Every primary and unique key starts with `namespace` and no foreign key crosses namespaces,
-- so the schema distributes by namespace on Citus unchanged. `{{EMBEDDING_DIM}}` is fixed
-- when the tables are created and recorded in memgate_settings.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One row: the embedding model and dimension the vectors were built with.
CREATE TABLE IF NOT EXISTS memgate_settings (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  embedding_model text NOT NULL,
  embedding_dim integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Entities (graph nodes). `visibility` holds the scopes that restrict who may see the row
-- (workspace:* / principal:*); `scopes` holds all scopes including relevance-only ones.
CREATE TABLE IF NOT EXISTS entities (
  namespace text NOT NULL,
  key text NOT NULL,
  kind text NOT NULL,
  title text NOT NULL,
  attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
  scopes text[] NOT NULL DEFAULT '{}',
  visibility text[] NOT NULL DEFAULT '{}',
  source_path text,
  confidence real,
  origin text NOT NULL DEFAULT 'AGENT' CHECK (origin IN ('VAULT', 'AGENT')),
  placeholder boolean NOT NULL DEFAULT false,
  stale boolean NOT NULL DEFAULT false,
  snapshot_id text,
  snapshot_scope text,
  aliases text[] NOT NULL DEFAULT '{}',
  pii boolean NOT NULL DEFAULT false,
  pii_categories text[] NOT NULL DEFAULT '{}',
  content text,
  provenance jsonb,
  last_seen timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, key)
);
CREATE INDEX IF NOT EXISTS entities_kind_idx ON entities (namespace, kind, key);
CREATE INDEX IF NOT EXISTS entities_title_trgm_idx ON entities USING gin (title gin_trgm_ops);
CREATE INDEX IF NOT EXISTS entities_aliases_idx ON entities USING gin (aliases);
CREATE INDEX IF NOT EXISTS entities_snapshot_idx ON entities (namespace, snapshot_scope) WHERE snapshot_scope IS NOT NULL;

-- Attribute versions: what an entity's attributes and title were during [valid_from, valid_to).
CREATE TABLE IF NOT EXISTS entity_versions (
  namespace text NOT NULL,
  key text NOT NULL,
  valid_from timestamptz NOT NULL,
  valid_to timestamptz,
  title text NOT NULL,
  attributes jsonb NOT NULL,
  observation_id text,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, key, valid_from)
);

-- Facts: every edge of the graph, bi-temporal (valid_* when true, recorded_at when learned).
CREATE TABLE IF NOT EXISTS facts (
  namespace text NOT NULL,
  fact_id text NOT NULL,
  subject text NOT NULL,
  predicate text NOT NULL,
  object text NOT NULL,
  valid_from timestamptz NOT NULL,
  valid_to timestamptz,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  evidence text NOT NULL CHECK (evidence IN ('ASSERTED', 'EXTRACTED', 'INFERRED', 'DERIVED')),
  confidence real NOT NULL,
  status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUPERSEDED', 'RETRACTED', 'EVIDENCE_LOST')),
  conflict boolean NOT NULL DEFAULT false,
  conflicts_with text[] NOT NULL DEFAULT '{}',
  supersedes text,
  superseded_by text,
  observation_ids text[] NOT NULL DEFAULT '{}',
  source_path text,
  scopes text[] NOT NULL DEFAULT '{}',
  visibility text[] NOT NULL DEFAULT '{}',
  attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
  status_reason text,
  snapshot_id text,
  snapshot_scope text,
  PRIMARY KEY (namespace, fact_id),
  CHECK (valid_to IS NULL OR valid_to >= valid_from)
);
CREATE INDEX IF NOT EXISTS facts_subject_idx ON facts (namespace, subject, predicate, valid_from);
CREATE INDEX IF NOT EXISTS facts_object_idx ON facts (namespace, object, predicate, valid_from);
CREATE INDEX IF NOT EXISTS facts_observations_idx ON facts USING gin (observation_ids);
CREATE INDEX IF NOT EXISTS facts_recorded_idx ON facts (namespace, recorded_at);
CREATE INDEX IF NOT EXISTS facts_snapshot_idx ON facts (namespace, snapshot_scope) WHERE snapshot_scope IS NOT NULL;

-- Observations: immutable evidence; only status and (on redaction) content/data change.
CREATE TABLE IF NOT EXISTS observations (
  namespace text NOT NULL,
  observation_id text NOT NULL,
  source_system text NOT NULL,
  source_stream text,
  source_external_id text,
  kind text NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  actor_type text,
  actor_id text,
  subject_type text,
  subject_id text,
  scopes text[] NOT NULL DEFAULT '{}',
  visibility text[] NOT NULL DEFAULT '{}',
  content text,
  data jsonb,
  provenance jsonb,
  status text NOT NULL DEFAULT 'RECEIVED' CHECK (status IN ('RECEIVED', 'PROCESSED', 'PARTIALLY_PROCESSED', 'FAILED', 'REDACTED')),
  status_reason text,
  session_id text,
  pii boolean NOT NULL DEFAULT false,
  pii_categories text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (namespace, observation_id)
);
CREATE INDEX IF NOT EXISTS observations_time_idx ON observations (namespace, occurred_at);
CREATE INDEX IF NOT EXISTS observations_kind_idx ON observations (namespace, kind, occurred_at);
CREATE INDEX IF NOT EXISTS observations_session_idx ON observations (namespace, session_id) WHERE session_id IS NOT NULL;

-- Which entities an observation mentions (evidence for Entity.observations), one row per pair.
CREATE TABLE IF NOT EXISTS mentions (
  namespace text NOT NULL,
  entity_key text NOT NULL,
  observation_id text NOT NULL,
  role text NOT NULL DEFAULT 'mention',
  PRIMARY KEY (namespace, entity_key, observation_id)
);
CREATE INDEX IF NOT EXISTS mentions_observation_idx ON mentions (namespace, observation_id);

-- Chunks: searchable text owned by an entity. `search_text` is what lexical search indexes
-- (title, heading and text, possibly enriched); the tsvector is built once, at write time.
CREATE TABLE IF NOT EXISTS chunks (
  namespace text NOT NULL,
  chunk_id bigint GENERATED ALWAYS AS IDENTITY,
  node_key text NOT NULL,
  ord integer NOT NULL,
  kind text NOT NULL,
  title text,
  heading text,
  text text NOT NULL,
  search_text text NOT NULL,
  ts_config regconfig NOT NULL DEFAULT 'english',
  tsv tsvector GENERATED ALWAYS AS (to_tsvector(ts_config, search_text)) STORED,
  source_path text,
  meta jsonb NOT NULL DEFAULT '{}'::jsonb,
  scopes text[] NOT NULL DEFAULT '{}',
  visibility text[] NOT NULL DEFAULT '{}',
  observation_id text,
  occurred_at timestamptz,
  pii boolean NOT NULL DEFAULT false,
  pii_categories text[] NOT NULL DEFAULT '{}',
  embedding vector({{EMBEDDING_DIM}}),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, node_key, ord),
  UNIQUE (namespace, chunk_id)
);
CREATE INDEX IF NOT EXISTS chunks_embedding_idx ON chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX IF NOT EXISTS chunks_tsv_idx ON chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS chunks_text_trgm_idx ON chunks USING gin (text gin_trgm_ops);
CREATE INDEX IF NOT EXISTS chunks_meta_idx ON chunks USING gin (meta jsonb_path_ops);
CREATE INDEX IF NOT EXISTS chunks_observation_idx ON chunks (namespace, observation_id) WHERE observation_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS chunks_time_idx ON chunks (namespace, occurred_at);

-- BM25 postings, maintained by triggers on chunks so they stay right under update, delete and
-- redaction. The primary key carries tf and doc_len so scoring is an index-only scan.
CREATE TABLE IF NOT EXISTS chunk_postings (
  namespace text NOT NULL,
  lexeme text NOT NULL,
  chunk_id bigint NOT NULL,
  tf integer NOT NULL,
  doc_len integer NOT NULL,
  PRIMARY KEY (namespace, lexeme, chunk_id) INCLUDE (tf, doc_len)
);

CREATE TABLE IF NOT EXISTS lexical_stats (
  namespace text PRIMARY KEY,
  doc_count bigint NOT NULL DEFAULT 0,
  total_len bigint NOT NULL DEFAULT 0
);

CREATE OR REPLACE FUNCTION memgate_postings_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH lex AS (
    SELECT n.namespace, n.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM new_rows n, unnest(n.tsv) AS l
  ), lens AS (
    SELECT namespace, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, lexeme, chunk_id, tf, doc_len)
    SELECT lex.namespace, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len
    FROM lex JOIN lens USING (namespace, chunk_id)
  )
  INSERT INTO lexical_stats AS s (namespace, doc_count, total_len)
  SELECT namespace, count(*), sum(doc_len) FROM lens GROUP BY namespace
  ON CONFLICT (namespace) DO UPDATE
    SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memgate_postings_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH lex AS (
    SELECT o.namespace, o.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM old_rows o, unnest(o.tsv) AS l
  ), lens AS (
    SELECT namespace, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, chunk_id
  ), del AS (
    DELETE FROM chunk_postings p USING lex
    WHERE p.namespace = lex.namespace AND p.lexeme = lex.lexeme AND p.chunk_id = lex.chunk_id
  )
  UPDATE lexical_stats s
  SET doc_count = s.doc_count - d.docs, total_len = s.total_len - d.len
  FROM (SELECT namespace, count(*) AS docs, sum(doc_len) AS len FROM lens GROUP BY namespace) d
  WHERE s.namespace = d.namespace;
  RETURN NULL;
END $$;

-- Updates re-post only rows whose tsvector changed (re-embedding must not rewrite postings).
CREATE OR REPLACE FUNCTION memgate_postings_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT o.namespace, o.chunk_id, o.tsv
    FROM old_rows o JOIN new_rows n ON n.namespace = o.namespace AND n.chunk_id = o.chunk_id
    WHERE o.tsv IS DISTINCT FROM n.tsv
  ), lex AS (
    SELECT c.namespace, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM changed c, unnest(c.tsv) AS l
  ), del AS (
    DELETE FROM chunk_postings p USING lex
    WHERE p.namespace = lex.namespace AND p.lexeme = lex.lexeme AND p.chunk_id = lex.chunk_id
  )
  UPDATE lexical_stats s SET total_len = s.total_len - d.len
  FROM (SELECT namespace, sum(tf) AS len FROM lex GROUP BY namespace) d
  WHERE s.namespace = d.namespace;

  WITH changed AS (
    SELECT n.namespace, n.chunk_id, n.tsv
    FROM old_rows o JOIN new_rows n ON n.namespace = o.namespace AND n.chunk_id = o.chunk_id
    WHERE o.tsv IS DISTINCT FROM n.tsv
  ), lex AS (
    SELECT c.namespace, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM changed c, unnest(c.tsv) AS l
  ), lens AS (
    SELECT namespace, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, lexeme, chunk_id, tf, doc_len)
    SELECT lex.namespace, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len
    FROM lex JOIN lens USING (namespace, chunk_id)
  )
  UPDATE lexical_stats s SET total_len = s.total_len + d.len
  FROM (SELECT namespace, sum(doc_len) AS len FROM lens GROUP BY namespace) d
  WHERE s.namespace = d.namespace;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS chunks_postings_insert ON chunks;
CREATE TRIGGER chunks_postings_insert AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memgate_postings_add();
DROP TRIGGER IF EXISTS chunks_postings_delete ON chunks;
CREATE TRIGGER chunks_postings_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memgate_postings_remove();
DROP TRIGGER IF EXISTS chunks_postings_update ON chunks;
CREATE TRIGGER chunks_postings_update AFTER UPDATE ON chunks
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memgate_postings_update();

-- Persisted explanations of every ContextPack and typed traversal.
CREATE TABLE IF NOT EXISTS context_traces (
  namespace text NOT NULL,
  trace_id text NOT NULL,
  kind text NOT NULL DEFAULT 'context',
  principal_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  request jsonb NOT NULL,
  channels jsonb NOT NULL DEFAULT '{}'::jsonb,
  decisions jsonb NOT NULL DEFAULT '[]'::jsonb,
  visibility text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (namespace, trace_id)
);
CREATE INDEX IF NOT EXISTS context_traces_created_idx ON context_traces (created_at);

-- Domain packs are a small reference table shared by all namespaces (a Citus reference table),
-- so its key is the pack's own (name, version); namespaces opt in via namespace_settings.
CREATE TABLE IF NOT EXISTS domain_packs (
  name text NOT NULL,
  version text NOT NULL,
  body jsonb NOT NULL,
  body_hash text NOT NULL,
  registered_by text,
  registered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, version)
);

CREATE TABLE IF NOT EXISTS namespace_settings (
  namespace text PRIMARY KEY,
  packs text[] NOT NULL DEFAULT '{}',
  strict boolean NOT NULL DEFAULT false,
  ts_config regconfig NOT NULL DEFAULT 'english',
  single_valued_predicates text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Append-only audit log: a trigger refuses UPDATE and DELETE, whoever asks.
CREATE TABLE IF NOT EXISTS audit_log (
  namespace text NOT NULL,
  audit_id bigint GENERATED ALWAYS AS IDENTITY,
  at timestamptz NOT NULL DEFAULT now(),
  principal_id text NOT NULL,
  action text NOT NULL,
  target text,
  summary jsonb NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (namespace, audit_id)
);
CREATE INDEX IF NOT EXISTS audit_log_at_idx ON audit_log (namespace, at);

CREATE OR REPLACE FUNCTION memgate_audit_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END $$;
DROP TRIGGER IF EXISTS audit_log_immutable ON audit_log;
CREATE TRIGGER audit_log_immutable BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION memgate_audit_immutable();
