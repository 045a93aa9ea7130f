-- The postings trigger functions as functions/postings.sql defines them (the same definitions
-- 016 and 022 left in place), from now on kept in that one file.
\ir functions/postings.sql
