-- The insert and delete postings triggers write and delete in the order of chunk_postings'
-- primary key (namespace, configuration, lexeme, chunk): a batch's tens of thousands of postings
-- (a 500-turn batch writes ~54k) then walk the index from one leaf to the next instead of
-- jumping to a random leaf per row; measured at size L on 47k postings, deleting took 0.76 ->
-- 0.51 s and inserting 1.04 -> 0.86 s. Same rows, same statistics as 010_text_search.
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
