-- 006_documents: what `retainDocuments` needs beyond 001 (which already has entities.content and
-- entities.provenance for the original text and the caller's provenance).

-- The document's meta tags as written (chunks carry a copy for search filters); `source()`
-- returns them.
ALTER TABLE entities ADD COLUMN IF NOT EXISTS meta jsonb;

-- sha256 over the canonical form of everything that shapes a document's row and chunks (kind,
-- title, content, meta, scopes, sourcePath, provenance, chunker version). Writing the same
-- document again compares hashes before embedding anything, so a retried batch is UNCHANGED
-- and costs no embedder call.
ALTER TABLE entities ADD COLUMN IF NOT EXISTS content_hash text;
