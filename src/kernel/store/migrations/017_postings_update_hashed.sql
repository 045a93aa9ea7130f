-- The update trigger found the chunks whose tsvector changed by joining its two transition
-- tables. A transition table has no statistics (the planner assumes one row), so that join ran
-- as a nested loop: rows x rows comparisons of tsvectors, twice per statement (1.6 s each for
-- the 900 chunks a bulk batch re-indexes in context). Here a changed row is one whose (chunk,
-- configuration, tsvector) is missing from the other side: a NOT IN over a small-looking subquery
-- is hashed, so the cost follows the rows. Every column compared is NOT NULL. Postings are
-- deleted and written in primary-key order, so neighbouring keys share their index pages.
CREATE OR REPLACE FUNCTION memgate_postings_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT o.namespace, o.ts_config, o.chunk_id, o.tsv
    FROM old_rows o
    WHERE (o.namespace, o.chunk_id, o.ts_config::oid, o.tsv::text) NOT IN (
      SELECT n.namespace, n.chunk_id, n.ts_config::oid, n.tsv::text FROM new_rows n)
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

  WITH changed AS (
    SELECT n.namespace, n.ts_config, n.chunk_id, n.tsv
    FROM new_rows n
    WHERE (n.namespace, n.chunk_id, n.ts_config::oid, n.tsv::text) NOT IN (
      SELECT o.namespace, o.chunk_id, o.ts_config::oid, o.tsv::text FROM old_rows o)
  ), lex AS (
    SELECT c.namespace, c.ts_config, c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
    FROM changed c, unnest(c.tsv) AS l
  ), lens AS (
    SELECT namespace, ts_config, chunk_id, sum(tf)::integer AS doc_len FROM lex GROUP BY namespace, ts_config, chunk_id
  ), ins AS (
    INSERT INTO chunk_postings (namespace, ts_config, lexeme, chunk_id, tf, doc_len)
    SELECT lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id, lex.tf, lens.doc_len
    FROM lex JOIN lens USING (namespace, ts_config, chunk_id)
    ORDER BY lex.namespace, lex.ts_config, lex.lexeme, lex.chunk_id
  )
  INSERT INTO lexical_stats AS s (namespace, ts_config, doc_count, total_len)
  SELECT namespace, ts_config, count(*), sum(doc_len) FROM lens GROUP BY namespace, ts_config
  ON CONFLICT (namespace, ts_config) DO UPDATE
    SET doc_count = s.doc_count + excluded.doc_count, total_len = s.total_len + excluded.total_len;
  RETURN NULL;
END $$;
