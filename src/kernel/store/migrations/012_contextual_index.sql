-- Contextual indexing: a short observation of a session is indexed with the text of its
-- neighbouring turns (a per-namespace window). `own_search_text` keeps what the writer indexed
-- (the actor's words and the text), so the window can be rebuilt from it whenever a neighbour
-- arrives, is redacted, or the window changes; NULL = the chunk carries no context.
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS own_search_text text;

-- The window: previous and next turns of the same session; NULL follows the server default.
ALTER TABLE namespace_settings ADD COLUMN IF NOT EXISTS context_previous integer;
ALTER TABLE namespace_settings ADD COLUMN IF NOT EXISTS context_next integer;

-- Mentions found in an observation's text by the entity gazetteer say so: EXTRACTED, against
-- ASSERTED for the ones a writer stated (assertions, actor, subject).
ALTER TABLE mentions ADD COLUMN IF NOT EXISTS evidence text NOT NULL DEFAULT 'ASSERTED';
