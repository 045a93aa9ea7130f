-- A session's turn is rewritten (search text, tsvector) each time a neighbouring turn arrives,
-- and a turn written among older ones rewrites up to three of them. At fillfactor 70 a page of
-- four ~1.4 kB turns had room for one or two new versions, so only 44% of those rewrites were
-- HOT at size L; each of the others paid a new entry in every chunk index (the HNSW graph, the
-- trigram and meta GIN, four B-trees: ~4 ms a row). Pages written from now on keep half free.
ALTER TABLE chunks SET (fillfactor = 50);
