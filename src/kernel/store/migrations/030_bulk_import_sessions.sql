-- An open bulk import per namespace (beginImport … finishImport): the arrival sequence's value
-- when it began. Its batches leave the contextual re-indexing of older turns to finishImport,
-- which re-indexes the neighbourhoods of every turn that arrived since, once; a crashed import
-- keeps its row, so the next finishImport (or a re-run) still does that work.
CREATE TABLE IF NOT EXISTS bulk_imports (
  namespace text PRIMARY KEY,
  from_arrival bigint NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now()
);
