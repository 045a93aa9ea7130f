-- 007_context: what the context compiler's channels need beyond 001.

-- The `recent` channel reads an observation's indexed text through its chunks (chunks_time_idx);
-- observations without text (data only) have no chunk and are read from here: a small partial
-- index, so the backward scan by time never walks the observations that do have text.
CREATE INDEX IF NOT EXISTS observations_data_only_idx ON observations (namespace, occurred_at)
  WHERE content IS NULL;
