-- Session compacts: one extractive summary per conversation session, built lazily the
-- first time a routed read selects more than two items of the session, and rebuilt when the
-- session changed (observation count or latest recorded_at differ). Only sessions whose
-- observations are all unrestricted (empty visibility) are compacted, so a cached summary never
-- carries text a reader may not see.
CREATE TABLE IF NOT EXISTS session_compacts (
  namespace text NOT NULL,
  session_id text NOT NULL,
  summary text NOT NULL,
  item_count integer NOT NULL,
  last_recorded_at timestamptz NOT NULL,
  first_at timestamptz NOT NULL,
  last_at timestamptz NOT NULL,
  visibility text[] NOT NULL DEFAULT '{}',
  built_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, session_id)
);
