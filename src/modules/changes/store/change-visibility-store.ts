import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';
import { visible } from '../../../kernel/store/visibility.js';

/** A deleted row as its change notice describes it (see migration 011). */
export interface RemovedRowVisibility {
  id: string;
  /** Visibility arrays that must all admit the principal; null: an endpoint already gone. */
  vis: readonly (readonly string[] | null)[];
}

/**
 * The ids of removed rows the principal could have seen: every visibility array admits it
 * through the same predicate as every read. An endpoint that was already gone when the fact
 * went is known to unrestricted principals only.
 */
export async function removedRowsVisibleTo(
  q: Queryable,
  rows: readonly RemovedRowVisibility[],
  scopes: string[] | null,
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: visibleRows } = await run<{ id: string }>(
    q,
    sql`/* removedRowsVisibleTo */
      SELECT r.item->>'id' AS id
      FROM jsonb_array_elements(${JSON.stringify(rows)}::jsonb) AS r(item)
      WHERE NOT EXISTS (
        SELECT 1
        FROM jsonb_array_elements(r.item->'vis') AS v(arr)
        CROSS JOIN LATERAL (
          SELECT ARRAY(SELECT jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(v.arr) = 'array' THEN v.arr ELSE '[]'::jsonb END)) AS visibility
        ) x
        WHERE NOT CASE WHEN jsonb_typeof(v.arr) = 'array' THEN ${visible('x', scopes)}
                       ELSE ${scopes}::text[] IS NULL END
      )`,
  );
  return new Set(visibleRows.map((r) => r.id));
}
