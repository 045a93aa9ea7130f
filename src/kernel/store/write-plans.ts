import type { Queryable } from '../../db/database.js';

/**
 * Plans the rest of a write transaction's statements generically (planned for any namespace,
 * not for the one at hand). A namespace written for the first time since the last ANALYZE has no
 * statistics of its own: planned for its name, every `namespace = …` reads as one row, so a
 * probe by primary key and a scan of the whole namespace cost the same to the planner, and it
 * picked scans that grew with the namespace (measured at size L: a 500-fact batch 0.6 s, a
 * 500-observation batch several seconds, most of it such scans). Planned for the average
 * namespace, the write path's key and session probes use the indexes that serve them.
 */
export async function planWritesForAnyNamespace(q: Queryable): Promise<void> {
  await q.query('/* planWritesForAnyNamespace */ SET LOCAL plan_cache_mode = force_generic_plan');
}
