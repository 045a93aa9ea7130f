-- The order in which observations arrived, for turns that share an occurred_at (a session sent
-- with one timestamp, minute-resolution exports): windows, timelines and "newer first" break
-- such ties by arrival (a batch's position, then the sequence) instead of by id, which is a hash.
CREATE SEQUENCE IF NOT EXISTS observation_arrival_seq;
ALTER TABLE observations ADD COLUMN IF NOT EXISTS arrival bigint;
-- Existing rows: the order they were recorded in, as near as the table can tell.
UPDATE observations o SET arrival = r.n
FROM (SELECT namespace, observation_id,
             row_number() OVER (ORDER BY recorded_at, occurred_at, observation_id) AS n
      FROM observations WHERE arrival IS NULL) r
WHERE o.namespace = r.namespace AND o.observation_id = r.observation_id;
SELECT setval('observation_arrival_seq', coalesce((SELECT max(arrival) FROM observations), 0) + 1, false);
ALTER TABLE observations ALTER COLUMN arrival SET DEFAULT nextval('observation_arrival_seq');
ALTER TABLE observations ALTER COLUMN arrival SET NOT NULL;

CREATE INDEX IF NOT EXISTS observations_session_arrival_idx
  ON observations (namespace, session_id, occurred_at, arrival) WHERE session_id IS NOT NULL;
DROP INDEX IF EXISTS observations_session_order_idx;
