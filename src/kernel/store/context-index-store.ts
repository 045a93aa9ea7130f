import type { Queryable } from '../../db/database.js';
import { updateChunksPosted } from './postings.js';
import { type Param, type SqlFragment, param, raw, run, sql } from './sql.js';

/**
 * Contextual indexing: a short observation of a session (or stream) is indexed with the text of
 * its neighbouring turns, so "what did she answer?" finds the answer turn by the question's
 * words. The chunk's shown `text` never changes; its `search_text` becomes the writer's own
 * search text repeated (own words weigh more in BM25) followed by the neighbours' text, and the
 * writer's version is kept in `own_search_text` so every rebuild starts from it. The statement
 * that changes a chunk's search text rewrites its postings too.
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
  const { rows } = await run<{ n: number }>(
    q,
    observationIds === null
      ? rebuildSessions(namespace)
      : rebuildNeighbourhoods(namespace, [...observationIds]),
  );
  return rows[0]?.n ?? 0;
}

/** The namespace's window as a CTE named `win` (previous, next). */
export const windowCte = (namespace: unknown): SqlFragment => sql`win AS MATERIALIZED (
       SELECT coalesce(s.context_previous, ${DEFAULT_CONTEXT_WINDOW.previous}::int) AS previous,
              coalesce(s.context_next, ${DEFAULT_CONTEXT_WINDOW.next}::int) AS next
       FROM (SELECT 1) one LEFT JOIN namespace_settings s ON s.namespace = ${namespace}
     )`;

/** What a neighbour lends (nothing once redacted) and whether a turn is short enough to take. */
const LENT = raw(`CASE WHEN o.status = 'REDACTED' THEN NULL ELSE left(o.content, ${NEIGHBOUR_CHARS}) END`);
const SHORT_TURN = (o: string) =>
  raw(`length(${o}.content) <= ${SHORT_OBSERVATION_CHARS} AND ${o}.status <> 'REDACTED'`);
/** A neighbour lends its text only when everyone who may see turn `a` may see it too. */
const SEEN_BY_ALL = raw(`(cardinality(n.visibility) = 0
                               OR (cardinality(a.visibility) > 0 AND a.visibility <@ n.visibility))`);

/**
 * The chunk update both rebuilds end with, after `ctes` (which define
 * `contexts(observation_id, neighbours, windowed)`): only chunks whose text changes are locked
 * and updated, and only their postings are rewritten.
 */
function updateChunks(namespace: unknown, ctes: SqlFragment) {
  const own = raw('coalesce(c.own_search_text, c.search_text)');
  return updateChunksPosted({
    with: ctes,
    changes: sql`t.own_text AS new_own_text, t.search_text AS new_search_text`,
    from: sql`FROM contexts x
       JOIN chunks c ON c.namespace = ${namespace} AND c.observation_id = x.observation_id
                    AND c.node_key = x.observation_id
       CROSS JOIN LATERAL (
         SELECT CASE WHEN x.windowed THEN ${own} END AS own_text,
                CASE WHEN x.windowed
                     THEN repeat(${own} || E'\n', ${OWN_TEXT_REPEATS}) || coalesce(x.neighbours, '')
                     ELSE ${own} END AS search_text
       ) t
       WHERE c.search_text IS DISTINCT FROM t.search_text OR c.own_search_text IS DISTINCT FROM t.own_text`,
    set: sql`search_text = o.new_search_text, own_search_text = o.new_own_text`,
  });
}

/** Every session of the namespace, numbered whole (a window change, `memgate reindex`). */
function rebuildSessions(namespace: string) {
  return sql`/* indexObservationContext */ ${updateChunks(
    namespace,
    sql`${windowCte(namespace)}, ordered AS MATERIALIZED (
       SELECT o.observation_id, o.session_id, o.visibility, ${LENT} AS lent, ${SHORT_TURN('o')} AS short,
              row_number() OVER (PARTITION BY o.session_id ORDER BY o.occurred_at, o.arrival) AS pos
       FROM observations o
       WHERE o.namespace = ${namespace} AND o.session_id IS NOT NULL AND o.content IS NOT NULL
     ), contexts AS (
       SELECT a.observation_id, string_agg(n.lent, E'\n' ORDER BY n.pos) AS neighbours,
              bool_or(win.previous + win.next > 0) AS windowed
       -- One equality per window position: a hash join, where a range condition on the
       -- position joined each turn to every turn of its session.
       FROM ordered a CROSS JOIN win CROSS JOIN LATERAL generate_series(-win.previous, win.next) AS d(off)
       LEFT JOIN ordered n ON n.session_id = a.session_id AND n.pos = a.pos + d.off AND d.off <> 0
                          AND n.lent IS NOT NULL AND ${SEEN_BY_ALL}
       WHERE a.short
       GROUP BY a.observation_id
     )`,
  )}`;
}

/** One session's turns (with content) before / after turn `t`, nearest first, at most `limit`. */
function turnsBeside(ns: Param, t: string, dir: 'before' | 'after', limit: string, columns: SqlFragment) {
  const [cmp, order] = dir === 'before' ? ['<', 'DESC'] : ['>', 'ASC'];
  return sql`(SELECT ${columns} FROM observations o
        WHERE o.namespace = ${ns} AND o.session_id = ${raw(t)}.session_id AND o.content IS NOT NULL
          AND (o.occurred_at, o.arrival) ${raw(cmp)} (${raw(t)}.occurred_at, ${raw(t)}.arrival)
        ORDER BY o.occurred_at ${raw(order)}, o.arrival ${raw(order)}
        LIMIT ${raw(limit)})`;
}

/**
 * A LATERAL subquery: `neighbours`, the text the window (CTE `win`) lends turn `a` (an
 * observations row), read by two short probes of the session-order index.
 */
function neighboursOf(ns: Param, a: string): SqlFragment {
  const lent = sql`o.observation_id, o.occurred_at, o.arrival, o.visibility, ${LENT} AS lent`;
  return sql`(
         SELECT string_agg(n.lent, E'\n' ORDER BY n.occurred_at, n.arrival) AS neighbours
         FROM (
           SELECT * FROM ${turnsBeside(ns, a, 'before', 'win.previous', lent)} nb
           UNION ALL SELECT * FROM ${turnsBeside(ns, a, 'after', 'win.next', lent)} na
         ) n
         WHERE n.lent IS NOT NULL AND ${SEEN_BY_ALL}
       )`;
}

/**
 * For an INSERT … SELECT of new chunks aliased `c` (with `search_text` and `own_search_text`;
 * the writer sets the latter on the chunks that take context): the search text and own text to
 * write and the joins they need. A contextual chunk gets its final text at once, its neighbours
 * read from the observations already written (its own batch's included) as the rebuild reads
 * them, so the pass after the batch leaves it alone. Needs `windowCte` in the statement.
 */
export function contextualChunkColumns(ns: Param, c: string) {
  const chunk = raw(c);
  const contextual = sql`${chunk}.own_search_text IS NOT NULL AND win.previous + win.next > 0`;
  return {
    searchText: sql`CASE WHEN ${contextual}
                 THEN repeat(${chunk}.own_search_text || E'\n', ${OWN_TEXT_REPEATS}) || coalesce(x.neighbours, '')
                 ELSE ${chunk}.search_text END`,
    ownText: sql`CASE WHEN ${contextual} THEN ${chunk}.own_search_text END`,
    joins: sql`CROSS JOIN win
     LEFT JOIN observations a ON ${chunk}.own_search_text IS NOT NULL AND a.namespace = ${ns}
                             AND a.observation_id = ${chunk}.observation_id
     LEFT JOIN LATERAL ${neighboursOf(ns, 'a')} x ON ${chunk}.own_search_text IS NOT NULL`,
  };
}

/**
 * The turns whose window holds one of `ids`: each touched turn, the \`next\` turns before it and
 * the \`previous\` turns after it. The work follows the batch, not the length of its sessions.
 */
function rebuildNeighbourhoods(namespace: string, ids: string[]) {
  const ns = param(namespace);
  const key = raw('o.observation_id');
  return sql`/* indexObservationContext */ ${updateChunks(
    ns,
    sql`${windowCte(ns)}, touched AS MATERIALIZED (
       SELECT o.observation_id, o.session_id, o.occurred_at, o.arrival FROM observations o
       WHERE o.namespace = ${ns} AND o.observation_id = ANY(${ids}::text[])
         AND o.session_id IS NOT NULL AND o.content IS NOT NULL
     ), affected AS MATERIALIZED (
       SELECT DISTINCT a.observation_id FROM touched t CROSS JOIN win
       CROSS JOIN LATERAL (
         SELECT t.observation_id
         UNION ALL SELECT observation_id FROM ${turnsBeside(ns, 't', 'before', 'win.next', key)} tb
         UNION ALL SELECT observation_id FROM ${turnsBeside(ns, 't', 'after', 'win.previous', key)} ta
       ) a
     ), contexts AS MATERIALIZED (
       SELECT a.observation_id, x.neighbours, win.previous + win.next > 0 AS windowed
       FROM affected f CROSS JOIN win
       JOIN observations a ON a.namespace = ${ns} AND a.observation_id = f.observation_id
       CROSS JOIN LATERAL ${neighboursOf(ns, 'a')} x
       WHERE ${SHORT_TURN('a')}
     )`,
  )}`;
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
