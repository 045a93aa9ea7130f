-- 027_change_outbox: change notices leave the triggers of 011 for an outbox the gateway writes.
--
-- A write notes the ids it created, updated or removed; the transaction appends them here in one
-- statement just before COMMIT and wakes the listeners (pg_notify with an empty payload). Each
-- gateway's feed then reads what committed since its last read: rows whose transaction is
-- visible in the feed's new snapshot and was not in its previous one. A row is read once however
-- transactions interleave, and a feed that missed wake-ups (a listener reconnecting, a failover)
-- catches up on its next read. Statement triggers with transition tables and NOTIFY from
-- triggers cannot run on a sharded cluster, and NOTIFY payloads are lost to a listener that is
-- down; this table has neither limit.
--
-- Rows carry ids, never content, and a removed row's visibility arrays (see 011); `namespace`
-- leads like in every tenant table. Rows older than the feed's retention are pruned.
CREATE TABLE IF NOT EXISTS change_outbox (
  namespace  text        NOT NULL,
  xid        xid8        NOT NULL DEFAULT pg_current_xact_id(),
  seq        bigserial   NOT NULL,
  kind       text        NOT NULL CHECK (kind IN ('ENTITY', 'FACT', 'OBSERVATION', 'DOCUMENT')),
  ids        text[]      NOT NULL DEFAULT '{}',
  removed    jsonb       NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, xid, seq)
);
-- A feed reads from its previous snapshot's xmin on.
CREATE INDEX IF NOT EXISTS change_outbox_xid ON change_outbox (xid);
CREATE INDEX IF NOT EXISTS change_outbox_created ON change_outbox (created_at);

DROP TRIGGER IF EXISTS entities_changes_ins ON entities;
DROP TRIGGER IF EXISTS entities_changes_upd ON entities;
DROP TRIGGER IF EXISTS entities_changes_del ON entities;
DROP TRIGGER IF EXISTS facts_changes_ins ON facts;
DROP TRIGGER IF EXISTS facts_changes_upd ON facts;
DROP TRIGGER IF EXISTS facts_changes_del ON facts;
DROP TRIGGER IF EXISTS observations_changes_ins ON observations;
DROP TRIGGER IF EXISTS observations_changes_upd ON observations;
DROP TRIGGER IF EXISTS observations_changes_del ON observations;
DROP FUNCTION IF EXISTS memgate_entity_changes();
DROP FUNCTION IF EXISTS memgate_fact_changes();
DROP FUNCTION IF EXISTS memgate_observation_changes();
DROP FUNCTION IF EXISTS memgate_send_ids(text[], text[], text[]);
DROP FUNCTION IF EXISTS memgate_send_removed(jsonb);
