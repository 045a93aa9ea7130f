-- A session's turns in order: contextual indexing re-reads only the turns next to the ones a
-- batch wrote (a few index probes each) instead of whole sessions, whose cost grew with the
-- stream. It serves every lookup by (namespace, session_id) too, so it replaces that index.
CREATE INDEX IF NOT EXISTS observations_session_order_idx
  ON observations (namespace, session_id, occurred_at, observation_id) WHERE session_id IS NOT NULL;
DROP INDEX IF EXISTS observations_session_idx;
