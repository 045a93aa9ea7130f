-- 003_graph_reads: the index plan of graph reads (entity facts pages, neighbours, paths,
-- timelines, evidence lookups). 001's (namespace, subject|object, predicate, valid_from)
-- indexes serve predicate-filtered reads; these serve the unfiltered, time-ordered ones.

-- Every per-node step of a traversal reads "the newest edges of this node, valid at asOf" as a
-- LATERAL ... ORDER BY valid_from DESC, fact_id DESC LIMIT n: with (valid_from, fact_id) right
-- after the endpoint the scan stops after n rows even on a node of 10k edges, instead of
-- sorting all of them. The same order is the keyset of Entity.facts cursors.
CREATE INDEX IF NOT EXISTS facts_subject_time_idx ON facts (namespace, subject, valid_from, fact_id);
CREATE INDEX IF NOT EXISTS facts_object_time_idx ON facts (namespace, object, valid_from, fact_id);
