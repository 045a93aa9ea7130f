-- BM25F's label field from the postings side: a posting is flagged when its lexeme also occurs
-- in the chunk's title or heading (analysed in the chunk's own configuration). The lexical
-- channel then boosts a chunk while it aggregates its postings, instead of joining the best
-- 4 x limit chunk rows and matching a pattern on their title and heading (4.1 ms of search's and
-- 16.8 ms of context's lexical statement at size L). The flag rides in the primary key's
-- INCLUDE so the scoring scan stays index-only. The triggers write it, and an update whose
-- title or heading changed re-posts the chunk even when its tsvector did not.
-- The backfill is one pass over the postings, as long as the data is large (about a minute
-- at 100k chunks): it is not held to the gateway's per-statement timeout. The key is dropped
-- while the flags are written and built once after, with the flag in its INCLUDE.
SET LOCAL statement_timeout = 0;
ALTER TABLE chunk_postings ADD COLUMN IF NOT EXISTS label boolean NOT NULL DEFAULT false;
ALTER TABLE chunk_postings DROP CONSTRAINT IF EXISTS chunk_postings_pkey;

UPDATE chunk_postings p SET label = true
FROM (SELECT c.namespace, c.chunk_id, w.lexeme
      FROM chunks c,
           unnest(tsvector_to_array(to_tsvector(c.ts_config, concat_ws(' ', c.title, c.heading)))) AS w(lexeme)
      WHERE c.title IS NOT NULL OR c.heading IS NOT NULL) l
WHERE p.namespace = l.namespace AND p.chunk_id = l.chunk_id AND p.lexeme = l.lexeme AND NOT p.label;

ALTER TABLE chunk_postings ADD CONSTRAINT chunk_postings_pkey
  PRIMARY KEY (namespace, ts_config, lexeme, chunk_id) INCLUDE (tf, doc_len, label);

CREATE OR REPLACE FUNCTION memgate_postings_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH src AS MATERIALIZED (
    -- The label's lexemes once per row, not once per posting.
    SELECT n.namespace, n.ts_config, n.chunk_id, n.tsv,
           tsvector_to_array(to_tsvector(n.ts_config, concat_ws(' ', n.title, n.heading))) AS label_words
    FROM new_rows n
  ), lex AS (
    SELECT s.namespace, s.ts_config, s.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf,
           l.lexeme = ANY (s.label_words) AS label
    FROM src s, unnest(s.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len, label)
    SELECT lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len, lex.label
    FROM lex JOIN lens USING (namespace, ts_config, chunk_id)
    ORDER BY lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id
  )
  INSERT INTO lexical_stats AS s (namespace, ts_config, doc_count, total_len)
  SELECT namespace, ts_config, count(*), sum(doc_len) FROM lens GROUP BY namespace, ts_config
  ON CONFLICT (namespace, ts_config) DO UPDATE
    SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len;
  RETURN NULL;
END $$;

-- As 017, with the label text in what makes a row changed (concat_ws is never NULL, so the
-- hashed NOT IN stays exact).
CREATE OR REPLACE FUNCTION memgate_postings_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT o.namespace, o.ts_config, o.chunk_id, o.tsv
    FROM old_rows o
    WHERE (o.namespace, o.chunk_id, o.ts_config::oid, o.tsv::text, concat_ws(' ', o.title, o.heading)) NOT IN (
      SELECT n.namespace, n.chunk_id, n.ts_config::oid, n.tsv::text, concat_ws(' ', n.title, n.heading) FROM new_rows n)
  ), lex AS (
    SELECT c.namespace, c.ts_config, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM changed c, unnest(c.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), del AS (
    DELETE FROM chunk_postings p
    USING (SELECT namespace, ts_config, lexeme, chunk_id FROM lex ORDER BY namespace, ts_config, lexeme, chunk_id) x
    WHERE p.namespace = x.namespace AND p.ts_config = x.ts_config AND p.lexeme = x.lexeme
      AND p.chunk_id = x.chunk_id
  )
  UPDATE lexical_stats s SET doc_count = s.doc_count - d.docs, total_len = s.total_len - d.len
  FROM (SELECT namespace, ts_config, count(*) AS docs, sum(doc_len) AS len FROM lens GROUP BY namespace, ts_config) d
  WHERE s.namespace = d.namespace AND s.ts_config = d.ts_config;

  WITH changed AS MATERIALIZED (
    SELECT n.namespace, n.ts_config, n.chunk_id, n.tsv,
           tsvector_to_array(to_tsvector(n.ts_config, concat_ws(' ', n.title, n.heading))) AS label_words
    FROM new_rows n
    WHERE (n.namespace, n.chunk_id, n.ts_config::oid, n.tsv::text, concat_ws(' ', n.title, n.heading)) NOT IN (
      SELECT o.namespace, o.chunk_id, o.ts_config::oid, o.tsv::text, concat_ws(' ', o.title, o.heading) FROM old_rows o)
  ), lex AS (
    SELECT c.namespace, c.ts_config, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf,
           l.lexeme = ANY (c.label_words) AS label
    FROM changed c, unnest(c.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len, label)
    SELECT lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len, lex.label
    FROM lex JOIN lens USING (namespace, ts_config, chunk_id)
    ORDER BY lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id
  )
  INSERT INTO lexical_stats AS s (namespace, ts_config, doc_count, total_len)
  SELECT namespace, ts_config, count(*), sum(doc_len) FROM lens GROUP BY namespace, ts_config
  ON CONFLICT (namespace, ts_config) DO UPDATE
    SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len;
  RETURN NULL;
END $$;
