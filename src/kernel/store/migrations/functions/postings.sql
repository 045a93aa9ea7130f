-- The postings trigger functions: chunks' tsvectors -> chunk_postings and lexical_stats (the
-- lexical channel's BM25F index). The triggers that call them are created in 001_core; the
-- functions are replaced here, whole, and re-applied by a migration line `\ir functions/postings.sql`
-- (see README.md in this folder). History of the choices below: 010 (per-configuration
-- postings), 016 (writes in primary-key order), 017 (hashed change detection), 022 (label flag).
--
-- Insert and delete write and delete in the order of chunk_postings' primary key (namespace,
-- configuration, lexeme, chunk): a batch's tens of thousands of postings then walk the index
-- from one leaf to the next instead of jumping to a random leaf per row. A posting is flagged
-- `label` when its lexeme also occurs in the chunk's title or heading (analysed in the chunk's
-- own configuration).

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

CREATE OR REPLACE FUNCTION memgate_postings_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH lex AS (
    SELECT o.namespace, o.ts_config, o.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM old_rows o, unnest(o.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), del AS (
    DELETE FROM chunk_postings p
    USING (SELECT namespace, ts_config, lexeme, chunk_id FROM lex ORDER BY namespace, ts_config, lexeme, chunk_id) x
    WHERE p.namespace = x.namespace AND p.ts_config = x.ts_config AND p.lexeme = x.lexeme
      AND p.chunk_id = x.chunk_id
  )
  UPDATE lexical_stats s
  SET doc_count = s.doc_count - d.docs, total_len = s.total_len - d.len
  FROM (SELECT namespace, ts_config, count(*) AS docs, sum(doc_len) AS len FROM lens GROUP BY namespace, ts_config) d
  WHERE s.namespace = d.namespace AND s.ts_config = d.ts_config;
  RETURN NULL;
END $$;

-- An update re-posts only the chunks whose tsvector, configuration or label text changed
-- (re-embedding must not rewrite postings); a changed chunk leaves its old configuration's
-- statistics and joins its new one's. A changed row is one whose (chunk, configuration,
-- tsvector, label text) is missing from the other transition table: transition tables have no
-- statistics, and a join of the two ran as a nested loop, where a NOT IN over a subquery is
-- hashed. Every column compared is NOT NULL (concat_ws never is), so NOT IN stays exact.
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
