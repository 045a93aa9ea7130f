-- Multi-hop expansion looks entities up by one capitalised name: a title that is the name,
-- starts with it or ends with it, case-insensitively (store/multi-hop-store.ts). The trigram
-- index answers those ILIKE patterns, but a short name's trigrams are common and each pattern
-- read ~4 ms of posting lists at 100k entities. The title's first and last word, lower-cased,
-- turn the match into equality probes; the ILIKE patterns stay as the exact check.
CREATE INDEX IF NOT EXISTS entities_title_first_word_idx
  ON entities (namespace, lower(split_part(title, ' ', 1)));
CREATE INDEX IF NOT EXISTS entities_title_last_word_idx
  ON entities (namespace, lower(reverse(split_part(reverse(title), ' ', 1))));
