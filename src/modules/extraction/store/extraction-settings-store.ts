import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';

/** The stored extraction settings of a namespace (null: none, defaults apply). */
export async function findExtractionSettings(q: Queryable, namespace: string): Promise<unknown> {
  const { rows } = await run<{ extraction: unknown }>(
    q,
    sql`/* findExtractionSettings */ SELECT extraction FROM namespace_settings WHERE namespace = ${namespace}`,
  );
  return rows[0]?.extraction ?? null;
}

/** Saves the settings; the namespace's packs, strict mode and other settings stay. */
export async function saveExtractionSettings(
  q: Queryable,
  namespace: string,
  settings: object,
): Promise<void> {
  await run(
    q,
    sql`/* saveExtractionSettings */
     INSERT INTO namespace_settings AS s (namespace, extraction) VALUES (${namespace}, ${JSON.stringify(settings)}::jsonb)
     ON CONFLICT (namespace) DO UPDATE SET extraction = excluded.extraction, updated_at = now()`,
  );
}
