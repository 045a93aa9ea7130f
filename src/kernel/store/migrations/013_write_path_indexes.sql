-- A session's turns in order: contextual indexing re-reads only the turns next to the ones a
-- batch wrote (a few index probes each) instead of whole sessions, whose cost grew with the
-- stream. It serves every lookup by (namespace, session_id) too, so it replaces that index.
CREATE INDEX IF NOT EXISTS observations_session_order_idx
  ON observations (namespace, session_id, occurred_at, observation_id) WHERE session_id IS NOT NULL;
DROP INDEX IF EXISTS observations_session_idx;

-- No query reads chunks through a GIN index on their tsvector: lexical search scores the BM25
-- postings table (kept by trigger). The index only cost every chunk write (and every re-index of
-- a turn's neighbours) a hundred-odd GIN entries.
DROP INDEX IF EXISTS chunks_tsv_idx;
