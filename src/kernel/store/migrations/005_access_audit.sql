-- 005_access_audit: what access control and the audit trail need beyond 001.

-- 001's trigger refuses UPDATE and DELETE row by row; TRUNCATE fires no row trigger, so it
-- gets its own statement-level refusal. No API path issues any of the three.
CREATE OR REPLACE FUNCTION memgate_audit_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END $$;
DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log;
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_audit_no_truncate();

-- auditTrail filters by action within a time window, newest first: (namespace, action, at)
-- serves the filtered reads; 001's (namespace, at) serves the unfiltered ones.
CREATE INDEX IF NOT EXISTS audit_log_action_at_idx ON audit_log (namespace, action, at, audit_id);
