-- 008_domain_packs: what domain packs, snapshot reconciliation and typed traversal need beyond
-- 001 (which has domain_packs, namespace_settings, and the stale/snapshot columns of entities
-- and facts).

-- One row per reconciled source snapshot. A snapshot id is immutable within its scope (the
-- same id with another body is a CONFLICT), and snapshots of a scope apply in observed order:
-- the newest row of a scope is what "no longer listed" is measured against.
CREATE TABLE IF NOT EXISTS source_snapshots (
  namespace text NOT NULL,
  scope text NOT NULL,
  snapshot_id text NOT NULL,
  source text,
  observed_at timestamptz NOT NULL,
  body_hash text NOT NULL,
  summary jsonb NOT NULL DEFAULT '{}'::jsonb,
  principal_id text,
  reconciled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, scope, snapshot_id)
);
CREATE INDEX IF NOT EXISTS source_snapshots_latest_idx ON source_snapshots (namespace, scope, observed_at DESC);

-- Typed traversal resolves pack aliases whose placeholders come from attributes with a
-- containment test (`attributes @> {...}`) inside one kind; without this it scans the kind.
CREATE INDEX IF NOT EXISTS entities_attributes_idx ON entities USING gin (attributes jsonb_path_ops);
