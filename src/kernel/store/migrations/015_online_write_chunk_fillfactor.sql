-- A turn's search text is rewritten when its neighbouring turns arrive (contextual indexing).
-- No index covers search_text, own_search_text or the tsvector, so that update can be HOT (no new
-- entry in the HNSW, trigram and other chunk indexes) if the new version fits on the same
-- page; with full pages it never did, and each re-indexed turn paid the index upkeep of a new
-- chunk. New chunk pages keep 30% free (a turn's chunk is ~2 kB) for those rewrites.
ALTER TABLE chunks SET (fillfactor = 70);
