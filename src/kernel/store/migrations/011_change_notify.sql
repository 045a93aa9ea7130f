-- 011_change_notify: every committed change to entities, documents, facts and observations is
-- announced on the `memgate_changes` channel, whichever path wrote it (a mutation, an assertion
-- inside recordObservations, a document's links, a snapshot, a purge, an import or a restore,
-- from this process or another). NOTIFY is transactional: listeners hear of a change only after
-- its transaction committed, and never of one that rolled back.
--
-- Payloads carry ids only, never content; each listener re-reads a changed row as its own
-- subscriber. A removed row cannot be re-read, so its notice carries what deciding visibility
-- needs: the visibility arrays that must all admit the subscriber (a fact's own and both
-- endpoints'; NULL when an endpoint is already gone) and the entity keys it touched.
-- An observation's graph node (an entity of kind 'observation') is announced as the
-- observation. Statement-level triggers with transition tables: one pass per statement.

-- Created or updated rows as parallel arrays (a trigger's transition table is visible to the
-- trigger function only): ids are joined as text, several times cheaper than a jsonb value per
-- row, into payloads well below NOTIFY's 8000-byte limit.
CREATE OR REPLACE FUNCTION memgate_send_ids(namespaces text[], kinds text[], ids text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('memgate_changes',
            '{"namespace":' || to_json(namespace)::text || ',"kind":"' || kind || '","ids":['
            || string_agg(to_json(id)::text, ',') || '],"removed":[]}')
  FROM (SELECT namespace, kind, id,
               sum(octet_length(id) + 8) OVER (PARTITION BY namespace, kind ROWS UNBOUNDED PRECEDING)
                 / 6000 AS bucket
        FROM unnest(namespaces, kinds, ids) AS changed(namespace, kind, id)) AS sized
  GROUP BY namespace, kind, bucket;
END $$;

-- Removed rows (rare: purges), each with what deciding its visibility needs.
CREATE OR REPLACE FUNCTION memgate_send_removed(changed jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF changed IS NULL THEN RETURN; END IF;
  PERFORM pg_notify('memgate_changes', jsonb_build_object(
            'namespace', namespace, 'kind', kind, 'ids', '[]'::jsonb,
            'removed', jsonb_agg(jsonb_build_object('id', id, 'vis', vis, 'refs', refs)))::text)
  FROM (SELECT c->>'namespace' AS namespace, c->>'kind' AS kind, c->>'id' AS id,
               c->'vis' AS vis, c->'refs' AS refs,
               sum(octet_length(c::text) + 8) OVER (
                 PARTITION BY c->>'namespace', c->>'kind' ROWS UNBOUNDED PRECEDING) / 6000 AS bucket
        FROM jsonb_array_elements(changed) AS c) AS sized
  GROUP BY namespace, kind, bucket;
END $$;

CREATE OR REPLACE FUNCTION memgate_entity_changes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM memgate_send_removed((SELECT jsonb_agg(jsonb_build_object(
             'namespace', o.namespace,
             'kind', CASE WHEN o.content_hash IS NULL THEN 'ENTITY' ELSE 'DOCUMENT' END,
             'id', o.key,
             'vis', jsonb_build_array(to_jsonb(o.visibility)), 'refs', jsonb_build_array(o.key)))
      FROM old_rows o WHERE o.kind <> 'observation'));
  ELSE
    PERFORM memgate_send_ids(array_agg(n.namespace),
              array_agg(CASE WHEN n.content_hash IS NULL THEN 'ENTITY' ELSE 'DOCUMENT' END), array_agg(n.key))
      FROM new_rows n WHERE n.kind <> 'observation';
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memgate_fact_changes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM memgate_send_removed((SELECT jsonb_agg(jsonb_build_object(
             'namespace', o.namespace, 'kind', 'FACT', 'id', o.fact_id,
             'vis', jsonb_build_array(
                      to_jsonb(o.visibility),
                      (SELECT to_jsonb(e.visibility) FROM entities e
                       WHERE e.namespace = o.namespace AND e.key = o.subject),
                      (SELECT to_jsonb(e.visibility) FROM entities e
                       WHERE e.namespace = o.namespace AND e.key = o.object)),
             'refs', jsonb_build_array(o.subject, o.object)))
      FROM old_rows o));
  ELSE
    PERFORM memgate_send_ids(array_agg(n.namespace), array_agg('FACT'::text), array_agg(n.fact_id))
      FROM new_rows n;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memgate_observation_changes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM memgate_send_removed((SELECT jsonb_agg(jsonb_build_object(
             'namespace', o.namespace, 'kind', 'OBSERVATION', 'id', o.observation_id,
             'vis', jsonb_build_array(to_jsonb(o.visibility)),
             'refs', jsonb_strip_nulls(jsonb_build_array(o.subject_id, o.actor_id))))
      FROM old_rows o));
  ELSE
    PERFORM memgate_send_ids(array_agg(n.namespace), array_agg('OBSERVATION'::text), array_agg(n.observation_id))
      FROM new_rows n;
  END IF;
  RETURN NULL;
END $$;

-- A trigger with transition tables serves one event, so each table gets three.
DROP TRIGGER IF EXISTS entities_changes_ins ON entities;
DROP TRIGGER IF EXISTS entities_changes_upd ON entities;
DROP TRIGGER IF EXISTS entities_changes_del ON entities;
CREATE TRIGGER entities_changes_ins AFTER INSERT ON entities REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_entity_changes();
CREATE TRIGGER entities_changes_upd AFTER UPDATE ON entities REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_entity_changes();
CREATE TRIGGER entities_changes_del AFTER DELETE ON entities REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_entity_changes();

DROP TRIGGER IF EXISTS facts_changes_ins ON facts;
DROP TRIGGER IF EXISTS facts_changes_upd ON facts;
DROP TRIGGER IF EXISTS facts_changes_del ON facts;
CREATE TRIGGER facts_changes_ins AFTER INSERT ON facts REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_fact_changes();
CREATE TRIGGER facts_changes_upd AFTER UPDATE ON facts REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_fact_changes();
CREATE TRIGGER facts_changes_del AFTER DELETE ON facts REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_fact_changes();

DROP TRIGGER IF EXISTS observations_changes_ins ON observations;
DROP TRIGGER IF EXISTS observations_changes_upd ON observations;
DROP TRIGGER IF EXISTS observations_changes_del ON observations;
CREATE TRIGGER observations_changes_ins AFTER INSERT ON observations REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_observation_changes();
CREATE TRIGGER observations_changes_upd AFTER UPDATE ON observations REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_observation_changes();
CREATE TRIGGER observations_changes_del AFTER DELETE ON observations REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memgate_observation_changes();
