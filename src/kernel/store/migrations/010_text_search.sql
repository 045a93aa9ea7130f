-- Text search per language. A namespace chooses its configuration (`text_search`: a name from
-- pg_ts_config, or 'auto' for a per-chunk detected language; NULL follows the server default),
-- and each chunk keeps the configuration its tsvector was built with. BM25 statistics are kept
-- per (namespace, configuration) so a Russian chunk's df and average length are counted among
-- Russian chunks only, and scores from two languages stay comparable in one namespace.
ALTER TABLE namespace_settings ADD COLUMN IF NOT EXISTS text_search text;
ALTER TABLE namespace_settings DROP COLUMN IF EXISTS ts_config;

-- Progress of the re-derivation that follows a change of language (one row per namespace).
CREATE TABLE IF NOT EXISTS text_search_reindex (
  namespace text PRIMARY KEY,
  text_search text NOT NULL,
  state text NOT NULL DEFAULT 'RUNNING',
  total bigint NOT NULL DEFAULT 0,
  done bigint NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  error text
);

-- Postings and statistics gain the configuration; rebuilt once from the chunks' tsvectors.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_name = 'chunk_postings' AND column_name = 'ts_config') THEN
    DROP TABLE IF EXISTS chunk_postings;
    DROP TABLE IF EXISTS lexical_stats;
  END IF;
END $$;

CREATE TABLE IF NOT EXISTS chunk_postings (
  namespace text NOT NULL,
  ts_config regconfig NOT NULL,
  lexeme text NOT NULL,
  chunk_id bigint NOT NULL,
  tf integer NOT NULL,
  doc_len integer NOT NULL,
  PRIMARY KEY (namespace, ts_config, lexeme, chunk_id) INCLUDE (tf, doc_len)
);

CREATE TABLE IF NOT EXISTS lexical_stats (
  namespace text NOT NULL,
  ts_config regconfig NOT NULL,
  doc_count bigint NOT NULL DEFAULT 0,
  total_len bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, ts_config)
);

CREATE OR REPLACE FUNCTION memgate_postings_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH lex AS (
    SELECT n.namespace, n.ts_config, n.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM new_rows n, unnest(n.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len)
    SELECT lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len
    FROM lex JOIN lens USING (namespace, ts_config, chunk_id)
  )
  INSERT INTO lexical_stats AS s (namespace, ts_config, doc_count, total_len)
  SELECT namespace, ts_config, count(*), sum(doc_len) FROM lens GROUP BY namespace, ts_config
  ON CONFLICT (namespace, ts_config) DO UPDATE
    SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memgate_postings_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH lex AS (
    SELECT o.namespace, o.ts_config, o.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM old_rows o, unnest(o.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), del AS (
    DELETE FROM chunk_postings p USING lex
    WHERE p.namespace = lex.namespace AND p.ts_config = lex.ts_config AND p.lexeme = lex.lexeme
      AND p.chunk_id = lex.chunk_id
  )
  UPDATE lexical_stats s
  SET doc_count = s.doc_count - d.docs, total_len = s.total_len - d.len
  FROM (SELECT namespace, ts_config, count(*) AS docs, sum(doc_len) AS len FROM lens GROUP BY namespace, ts_config) d
  WHERE s.namespace = d.namespace AND s.ts_config = d.ts_config;
  RETURN NULL;
END $$;

-- Updates re-post only rows whose tsvector changed (re-embedding must not rewrite postings). A
-- changed row leaves its old configuration's statistics and joins its new one's, so a change of
-- language moves the document between the two counts.
CREATE OR REPLACE FUNCTION memgate_postings_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT o.namespace, o.ts_config, o.chunk_id, o.tsv
    FROM old_rows o JOIN new_rows n ON n.namespace = o.namespace AND n.chunk_id = o.chunk_id
    WHERE o.tsv IS DISTINCT FROM n.tsv OR o.ts_config IS DISTINCT FROM n.ts_config
  ), lex AS (
    SELECT c.namespace, c.ts_config, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM changed c, unnest(c.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), del AS (
    DELETE FROM chunk_postings p USING lex
    WHERE p.namespace = lex.namespace AND p.ts_config = lex.ts_config AND p.lexeme = lex.lexeme
      AND p.chunk_id = lex.chunk_id
  )
  UPDATE lexical_stats s SET doc_count = s.doc_count - d.docs, total_len = s.total_len - d.len
  FROM (SELECT namespace, ts_config, count(*) AS docs, sum(doc_len) AS len FROM lens GROUP BY namespace, ts_config) d
  WHERE s.namespace = d.namespace AND s.ts_config = d.ts_config;

  WITH changed AS (
    SELECT n.namespace, n.ts_config, n.chunk_id, n.tsv
    FROM old_rows o JOIN new_rows n ON n.namespace = o.namespace AND n.chunk_id = o.chunk_id
    WHERE o.tsv IS DISTINCT FROM n.tsv OR o.ts_config IS DISTINCT FROM n.ts_config
  ), lex AS (
    SELECT c.namespace, c.ts_config, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM changed c, unnest(c.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len)
    SELECT lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len
    FROM lex JOIN lens USING (namespace, ts_config, chunk_id)
  )
  INSERT INTO lexical_stats AS s (namespace, ts_config, doc_count, total_len)
  SELECT namespace, ts_config, count(*), sum(doc_len) FROM lens GROUP BY namespace, ts_config
  ON CONFLICT (namespace, ts_config) DO UPDATE
    SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len;
  RETURN NULL;
END $$;

-- Rebuild from the chunks when the tables were just recreated (a no-op otherwise).
INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len)
SELECT lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id, lex.tf,
       (sum(lex.tf) OVER (PARTITION BY lex.namespace, lex.chunk_id))::integer
FROM (SELECT c.namespace, c.ts_config, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
      FROM chunks c, unnest(c.tsv) AS l) lex
WHERE NOT EXISTS (SELECT 1 FROM lexical_stats)
ON CONFLICT DO NOTHING;

INSERT INTO lexical_stats (namespace, ts_config, doc_count, total_len)
SELECT namespace, ts_config, count(*), sum(doc_len)
FROM (SELECT DISTINCT namespace, ts_config, chunk_id, doc_len FROM chunk_postings) d
WHERE NOT EXISTS (SELECT 1 FROM lexical_stats)
GROUP BY namespace, ts_config;
