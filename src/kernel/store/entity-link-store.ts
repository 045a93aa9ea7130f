import type { Queryable } from '../../db/database.js';
import { type SqlFragment, raw, run, sql } from './sql.js';

/**
 * Entity linking at write time, offline: an observation is linked to its actor and subject
 * entities (role `actor` / `subject`, evidence ASSERTED: the writer named them) and to the
 * known entities its text names (role `mention`, evidence EXTRACTED). The gazetteer is the
 * namespace's entities — titles, aliases and plain keys — matched as whole words after case and
 * punctuation folding ("ATL-142" matches "atl 142", "Alice" does not match "Malice"). Words of
 * the batch prune the gazetteer first (an entity can only match if its first word occurs), then
 * each text's runs of words (of the lengths the remaining names have) are joined to the names:
 * a multi-pattern match in one statement whose cost follows the text's size.
 *
 * Links are mentions, so entity.observations, timelines, facets and the graph channel read them
 * with everything else; an entity created after an observation is linked by `memgate reindex`.
 */

/** Entity kinds the gateway writes for its own bookkeeping: not names anyone writes in text. */
const NOT_NAMED_KINDS = ['observation', 'episode', 'document', 'session'];
/** Shorter names ("AI", "Q3") match too much ordinary text. */
const MIN_NAME_CHARS = 3;

/** Case and punctuation folding, the same for texts and names: words joined by one space. */
const folded = (expr: SqlFragment) => sql`btrim(regexp_replace(lower(${expr}), '[^[:alnum:]]+', ' ', 'g'))`;

/**
 * Links the given observations (null = every observation of the namespace) to the entities
 * they name; one statement. Returns the number of new mentions.
 */
export async function linkObservationEntities(
  q: Queryable,
  namespace: string,
  observationIds: readonly string[] | null,
): Promise<number> {
  if (observationIds !== null && observationIds.length === 0) return 0;
  // Two texts, not `$ids IS NULL OR …`: the write path plans generically, and a generic plan of
  // that disjunction scanned the namespace's observations instead of probing the batch's keys.
  const batch =
    observationIds === null ? sql`` : sql`AND o.observation_id = ANY(${[...observationIds]}::text[])`;
  const { rowCount } = await run(
    q,
    sql`/* linkObservationEntities */
     WITH obs AS MATERIALIZED (
       SELECT o.observation_id, o.actor_type, o.actor_id, o.subject_type, o.subject_id,
              string_to_array(${folded(raw("coalesce(o.content, '')"))}, ' ') AS words
       FROM observations o
       WHERE o.namespace = ${namespace} AND o.status <> 'REDACTED'
         ${batch}
     ), vocabulary AS MATERIALIZED (
       SELECT DISTINCT w.word FROM obs CROSS JOIN LATERAL unnest(obs.words) AS w(word)
     ), names AS MATERIALIZED (
       SELECT DISTINCT e.key, n.name, cardinality(string_to_array(n.name, ' ')) AS length
       FROM entities e
       CROSS JOIN LATERAL (
         SELECT ${folded(raw('x.name'))} AS name
         FROM unnest(e.aliases || e.title || CASE WHEN e.key ~ '^[^:/]+$' THEN e.key END) AS x(name)
       ) n
       WHERE e.namespace = ${namespace} AND NOT (e.kind = ANY(${NOT_NAMED_KINDS}::text[]))
         AND length(n.name) >= ${MIN_NAME_CHARS}
         AND split_part(n.name, ' ', 1) IN (SELECT word FROM vocabulary)
     ), lengths AS MATERIALIZED (
       SELECT DISTINCT length FROM names
     ), grams AS (
       -- Every run of words of a length some name has: a hash join against the names, so the
       -- cost follows the text's size, not its size times the gazetteer's.
       SELECT DISTINCT o.observation_id, array_to_string(o.words[i : i + l.length - 1], ' ') AS gram
       FROM obs o CROSS JOIN lengths l
       CROSS JOIN LATERAL generate_series(1, cardinality(o.words) - l.length + 1) AS i
     ), found AS (
       SELECT n.key AS entity_key, g.observation_id, 'mention' AS role, 'EXTRACTED' AS evidence, 3 AS rank
       FROM grams g JOIN names n ON n.name = g.gram
       UNION ALL
       -- The actor's and subject's entity: key = id, or "<type>:<id>" (primary-key probes).
       SELECT e.key, o.observation_id, r.role, 'ASSERTED', r.rank
       FROM obs o
       CROSS JOIN LATERAL (VALUES ('actor', 1, o.actor_id), ('actor', 1, o.actor_type || ':' || o.actor_id),
                                  ('subject', 2, o.subject_id), ('subject', 2, o.subject_type || ':' || o.subject_id))
         AS r(role, rank, key)
       JOIN entities e ON e.namespace = ${namespace} AND e.key = r.key
     )
     INSERT INTO mentions (namespace, entity_key, observation_id, role, evidence)
     SELECT DISTINCT ON (f.entity_key, f.observation_id) ${namespace}, f.entity_key, f.observation_id, f.role, f.evidence
     FROM found f
     WHERE f.entity_key <> f.observation_id
     ORDER BY f.entity_key, f.observation_id, f.rank
     ON CONFLICT (namespace, entity_key, observation_id) DO NOTHING`,
  );
  return rowCount;
}

// ------------------------------------------------------------------ the same matcher, at query time

/**
 * `alias` (an entities row) is named in `text` by the gazetteer's rule: one of its titles,
 * aliases or plain key, folded, occurs in the folded text as whole words — the predicate that
 * linked observations to it at write time, now asked of a query. `text` null matches nothing.
 */
export function namedIn(alias: string, text: string | null): SqlFragment {
  const e = raw(alias);
  const haystack = sql`' ' || ${folded(sql`${text}::text`)} || ' '`;
  return sql`(${text}::text IS NOT NULL AND NOT (${e}.kind = ANY(${NOT_NAMED_KINDS}::text[]))
    AND EXISTS (SELECT 1 FROM unnest(${e}.aliases || ${e}.title || CASE WHEN ${e}.key ~ '^[^:/]+$' THEN ${e}.key END) AS nm(name)
                WHERE length(${folded(raw('nm.name'))}) >= ${MIN_NAME_CHARS}
                  AND position(' ' || ${folded(raw('nm.name'))} || ' ' IN ${haystack}) > 0))`;
}
