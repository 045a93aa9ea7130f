-- 028_postings_in_statements: the BM25 postings leave the statement triggers of 001 (functions
-- in functions/postings.sql) for the statements that write chunks.
--
-- Every statement that inserts, re-indexes or deletes chunks now writes `chunk_postings` and
-- `lexical_stats` itself, as data-modifying CTEs of that same statement (src/kernel/store/
-- postings.ts builds them; the rows are the ones the triggers wrote). Statement triggers with
-- transition tables cannot run on a sharded cluster (see docs/scaling.md), and an update now
-- rewrites only the postings that differ instead of deleting and re-inserting a changed
-- chunk's postings. `doc_len` stays on each posting: the lexical read scores from the postings'
-- index alone, and joining chunks for the length instead took it from 2.9 ms to over 10 ms at
-- size L.
--
-- The tables are already consistent with the chunks (the triggers kept them so up to here), so
-- nothing is rebuilt. From here on a statement that writes chunks without those CTEs, a later
-- migration's included, leaves the index behind.
DROP TRIGGER IF EXISTS chunks_postings_insert ON chunks;
DROP TRIGGER IF EXISTS chunks_postings_update ON chunks;
DROP TRIGGER IF EXISTS chunks_postings_delete ON chunks;
DROP FUNCTION IF EXISTS memgate_postings_add();
DROP FUNCTION IF EXISTS memgate_postings_update();
DROP FUNCTION IF EXISTS memgate_postings_remove();
