-- Entity summaries (evidence DERIVED) are chunks of their entity (kind 'summary', negative
-- orders, one per visibility class: see src/modules/summaries/summary-classes.ts), so search
-- finds them through the channels every chunk goes through. This table holds the entities whose
-- evidence changed since their summary was built: marked after the change committed, taken by
-- the refresher once `due_at` has passed (a burst of writes about one entity is one rebuild; an
-- entity that keeps changing is rebuilt a bounded time after its first mark), and
-- cleared when the rebuild commits unless a newer mark arrived meanwhile.
CREATE TABLE IF NOT EXISTS summary_refresh (
  namespace text NOT NULL,
  entity_key text NOT NULL,
  due_at timestamptz NOT NULL,
  marked_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  first_marked_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  locked_until timestamptz,
  PRIMARY KEY (namespace, entity_key)
);
CREATE INDEX IF NOT EXISTS summary_refresh_due_idx ON summary_refresh (due_at);

-- Summary chunks of an entity, found without reading its other chunks.
CREATE INDEX IF NOT EXISTS chunks_summary_idx ON chunks (namespace, node_key) WHERE kind = 'summary';
