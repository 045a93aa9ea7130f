import type { Queryable } from '../../src/db/database.js';

/**
 * Every row of every table that belongs to principal B in a namespace: rows whose visibility
 * scopes are all among B's (and not empty), facts touching such an entity, and what hangs off
 * them (attribute versions, mentions, postings). Written independently of the gateway's own
 * visibility fragments, so a bug there cannot hide itself. Compare two dumps to prove a write
 * changed nothing of B's.
 */
export async function dumpScopedRows(
  db: Queryable,
  namespace: string,
  scopes: readonly string[],
): Promise<Record<string, string[]>> {
  const owned = (alias: string) =>
    `(cardinality(${alias}.visibility) > 0 AND ${alias}.visibility <@ $2::text[])`;
  const ownedEntity = (keyExpr: string) =>
    `EXISTS (SELECT 1 FROM entities x WHERE x.namespace = $1 AND x.key = ${keyExpr} AND ${owned('x')})`;
  const ownedObservation = (idExpr: string) =>
    `EXISTS (SELECT 1 FROM observations y WHERE y.namespace = $1 AND y.observation_id = ${idExpr} AND ${owned('y')})`;
  const tables: Record<string, string> = {
    entities: `SELECT to_jsonb(t)::text AS row FROM entities t WHERE t.namespace = $1 AND ${owned('t')}`,
    entity_versions: `SELECT to_jsonb(t)::text AS row FROM entity_versions t
      WHERE t.namespace = $1 AND ${ownedEntity('t.key')}`,
    facts: `SELECT to_jsonb(t)::text AS row FROM facts t WHERE t.namespace = $1
      AND (${owned('t')} OR ${ownedEntity('t.subject')} OR ${ownedEntity('t.object')})`,
    observations: `SELECT to_jsonb(t)::text AS row FROM observations t WHERE t.namespace = $1 AND ${owned('t')}`,
    chunks: `SELECT (to_jsonb(t) - 'embedding' - 'tsv')::text || coalesce(t.embedding::text, '') AS row
      FROM chunks t WHERE t.namespace = $1 AND (${owned('t')} OR ${ownedEntity('t.node_key')})`,
    chunk_postings: `SELECT to_jsonb(p)::text AS row FROM chunk_postings p
      JOIN chunks t ON t.namespace = p.namespace AND t.chunk_id = p.chunk_id
      WHERE p.namespace = $1 AND ${owned('t')}`,
    mentions: `SELECT to_jsonb(t)::text AS row FROM mentions t WHERE t.namespace = $1
      AND (${ownedEntity('t.entity_key')} OR ${ownedObservation('t.observation_id')})`,
    context_traces: `SELECT to_jsonb(t)::text AS row FROM context_traces t WHERE t.namespace = $1 AND ${owned('t')}`,
    session_compacts: `SELECT to_jsonb(t)::text AS row FROM session_compacts t
      WHERE t.namespace = $1 AND ${owned('t')}`,
  };
  const dump: Record<string, string[]> = {};
  for (const [table, sql] of Object.entries(tables)) {
    const { rows } = await db.query<{ row: string }>(`/* dumpScopedRows */ ${sql} ORDER BY 1`, [
      namespace,
      [...scopes],
    ]);
    dump[table] = rows.map((r) => r.row);
  }
  return dump;
}

/** How many rows a dump holds (a positive control: the dump must not be empty). */
export function dumpSize(dump: Record<string, string[]>): number {
  return Object.values(dump).reduce((n, rows) => n + rows.length, 0);
}
