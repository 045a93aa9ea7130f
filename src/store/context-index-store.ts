import type { Queryable } from '../db/database.js';
import { raw, run, sql } from './sql.js';

/**
 * Contextual indexing: a short observation of a session (or stream) is indexed with the text of
 * its neighbouring turns, so "what did she answer?" finds the answer turn by the question's
 * words. The chunk's shown `text` never changes; its `search_text` becomes the writer's own
 * search text repeated (own words weigh more in BM25) followed by the neighbours' text, and the
 * writer's version is kept in `own_search_text` so every rebuild starts from it. The postings
 * follow by trigger.
 *
 * The window is a namespace setting (`namespace_settings.context_previous/next`, NULL = the
 * default here). A neighbour lends its text only when everyone who may see the chunk may see
 * the neighbour too: a restricted turn's words must not make a public turn findable.
 */

export interface ContextWindow {
  /** Previous turns of the same session whose text joins a turn's index. */
  previous: number;
  /** Following turns likewise. */
  next: number;
}

/**
 * The default window: on, two turns before and one after. On the LoCoMo dev split, (2,1) beat
 * (1,1), (3,1) and (2,2) on both halves of the split (R@10 and MRR); see eval/results.
 */
export const DEFAULT_CONTEXT_WINDOW: ContextWindow = { previous: 2, next: 1 };
/** The largest window a namespace may set. */
export const MAX_CONTEXT_WINDOW = 5;
/** How often a turn's own search text is repeated ahead of its neighbours' text. */
export const OWN_TEXT_REPEATS = 2;
/** Observations longer than this (several chunks) stand alone; they still lend their start. */
const SHORT_OBSERVATION_CHARS = 2000;
/** How much of a neighbour's text joins a turn's index. */
const NEIGHBOUR_CHARS = 600;

/**
 * Rebuilds the search text of the observation chunks whose window holds one of
 * `observationIds` (the ones just written or redacted; null = every session of the namespace).
 * One statement, whatever the batch size; returns the number of chunks whose index changed.
 */
export async function indexObservationContext(
  q: Queryable,
  namespace: string,
  observationIds: readonly string[] | null,
): Promise<number> {
  if (observationIds !== null && observationIds.length === 0) return 0;
  const ids = observationIds === null ? null : [...observationIds];
  const own = raw('coalesce(c.own_search_text, c.search_text)');
  const { rowCount } = await run(
    q,
    sql`/* indexObservationContext */
     WITH win AS MATERIALIZED (
       SELECT coalesce(s.context_previous, ${DEFAULT_CONTEXT_WINDOW.previous}::int) AS previous,
              coalesce(s.context_next, ${DEFAULT_CONTEXT_WINDOW.next}::int) AS next
       FROM (SELECT 1) one LEFT JOIN namespace_settings s ON s.namespace = ${namespace}
     ), sessions AS MATERIALIZED (
       SELECT DISTINCT o.session_id FROM observations o
       WHERE o.namespace = ${namespace} AND o.session_id IS NOT NULL
         AND (${ids}::text[] IS NULL OR o.observation_id = ANY(${ids}::text[]))
     ), ordered AS MATERIALIZED (
       SELECT o.observation_id, o.session_id, o.visibility,
              CASE WHEN o.status = 'REDACTED' THEN NULL ELSE left(o.content, ${NEIGHBOUR_CHARS}) END AS lent,
              length(o.content) <= ${SHORT_OBSERVATION_CHARS} AND o.status <> 'REDACTED' AS short,
              (${ids}::text[] IS NULL OR o.observation_id = ANY(${ids}::text[])) AS touched,
              row_number() OVER (PARTITION BY o.session_id ORDER BY o.occurred_at, o.observation_id) AS pos
       FROM observations o JOIN sessions s ON s.session_id = o.session_id
       WHERE o.namespace = ${namespace} AND o.content IS NOT NULL
     ), affected AS MATERIALIZED (
       -- A turn's index changes when a touched turn lies inside its window.
       SELECT DISTINCT a.observation_id, a.session_id, a.visibility, a.pos
       FROM ordered a CROSS JOIN win
       JOIN ordered t ON t.session_id = a.session_id AND t.touched
                     AND t.pos BETWEEN a.pos - win.previous AND a.pos + win.next
       WHERE a.short
     ), contexts AS (
       SELECT a.observation_id, string_agg(n.lent, E'\n' ORDER BY n.pos) AS neighbours,
              bool_or(win.previous + win.next > 0) AS windowed
       FROM affected a CROSS JOIN win
       LEFT JOIN ordered n ON n.session_id = a.session_id AND n.pos <> a.pos
                          AND n.pos BETWEEN a.pos - win.previous AND a.pos + win.next
                          AND n.lent IS NOT NULL
                          AND (cardinality(n.visibility) = 0
                               OR (cardinality(a.visibility) > 0 AND a.visibility <@ n.visibility))
       GROUP BY a.observation_id
     ), target AS (
       SELECT c.chunk_id,
              CASE WHEN x.windowed THEN ${own} END AS own_text,
              CASE WHEN x.windowed
                   THEN repeat(${own} || E'\n', ${OWN_TEXT_REPEATS}) || coalesce(x.neighbours, '')
                   ELSE ${own} END AS search_text
       FROM contexts x
       JOIN chunks c ON c.namespace = ${namespace} AND c.observation_id = x.observation_id
                    AND c.node_key = x.observation_id
     )
     UPDATE chunks c
     SET search_text = t.search_text, own_search_text = t.own_text
     FROM target t
     WHERE c.namespace = ${namespace} AND c.chunk_id = t.chunk_id
       AND (c.search_text IS DISTINCT FROM t.search_text OR c.own_search_text IS DISTINCT FROM t.own_text)`,
  );
  return rowCount;
}

export async function findContextWindow(q: Queryable, namespace: string): Promise<ContextWindow> {
  const { rows } = await run<ContextWindow>(
    q,
    sql`/* findContextWindow */
     SELECT coalesce(s.context_previous, ${DEFAULT_CONTEXT_WINDOW.previous}::int) AS previous,
            coalesce(s.context_next, ${DEFAULT_CONTEXT_WINDOW.next}::int) AS next
     FROM (SELECT 1) one LEFT JOIN namespace_settings s ON s.namespace = ${namespace}`,
  );
  return rows[0]!;
}

/** Sets the namespace's window (null restores the default); other settings stay. */
export async function saveContextWindow(
  q: Queryable,
  namespace: string,
  window: ContextWindow | null,
): Promise<void> {
  await run(
    q,
    sql`/* saveContextWindow */
     INSERT INTO namespace_settings AS s (namespace, context_previous, context_next)
     VALUES (${namespace}, ${window?.previous ?? null}::int, ${window?.next ?? null}::int)
     ON CONFLICT (namespace) DO UPDATE
       SET context_previous = excluded.context_previous, context_next = excluded.context_next, updated_at = now()`,
  );
}

/** Namespaces holding observation chunks (what a full rebuild walks). */
export async function namespacesWithObservations(q: Queryable): Promise<string[]> {
  const { rows } = await run<{ namespace: string }>(
    q,
    sql`/* namespacesWithObservations */
     SELECT DISTINCT namespace FROM observations ORDER BY namespace`,
  );
  return rows.map((r) => r.namespace);
}

/** A turn of a batch as the in-batch window needs it. */
export interface BatchTurn {
  id: string;
  sessionId: string | null;
  occurredAt: Date;
  content: string | null;
  visibility: readonly string[];
  /** The writer's own search text of the turn's single chunk. */
  ownSearchText: string;
}

/**
 * The search texts `indexObservationContext` would give the batch's turns if the batch were the
 * whole session: written with the chunks, so the common case (a session arriving in one batch)
 * costs one postings write, not two. Turns next to older ones are corrected after the insert by
 * `indexObservationContext`, which stays the one definition (it changes nothing it agrees with).
 */
export function batchContextTexts(turns: readonly BatchTurn[], window: ContextWindow): Map<string, string> {
  const out = new Map<string, string>();
  if (window.previous + window.next === 0) return out;
  const sessions = new Map<string, BatchTurn[]>();
  for (const t of turns) {
    if (t.sessionId === null || t.content === null) continue;
    const list = sessions.get(t.sessionId) ?? [];
    list.push(t);
    sessions.set(t.sessionId, list);
  }
  const codePoints = (s: string) => Array.from(s);
  for (const list of sessions.values()) {
    list.sort(
      (a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
    list.forEach((turn, pos) => {
      if (codePoints(turn.content!).length > SHORT_OBSERVATION_CHARS) return;
      const lent: string[] = [];
      for (
        let i = Math.max(0, pos - window.previous);
        i <= Math.min(list.length - 1, pos + window.next);
        i++
      ) {
        const n = list[i]!;
        if (i === pos) continue;
        const sees =
          n.visibility.length === 0 ||
          (turn.visibility.length > 0 && turn.visibility.every((s) => n.visibility.includes(s)));
        if (sees) lent.push(codePoints(n.content!).slice(0, NEIGHBOUR_CHARS).join(''));
      }
      out.set(turn.id, `${turn.ownSearchText}\n`.repeat(OWN_TEXT_REPEATS) + lent.join('\n'));
    });
  }
  return out;
}
