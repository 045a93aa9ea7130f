import type { Queryable } from '../../../db/database.js';
import { param, raw, run, sql } from '../../../kernel/store/sql.js';

/**
 * The pack registry: one small reference table shared by every namespace (a Citus reference
 * table), keyed by the pack's own (name, version). Rows are never updated: a version is
 * immutable, so registration only inserts.
 */
export interface DomainPackRow {
  name: string;
  version: string;
  body: Record<string, unknown>;
  bodyHash: string;
  registeredBy: string | null;
  registeredAt: Date;
}

const PACK_COLUMNS = `p.name, p.version, p.body, p.body_hash AS "bodyHash",
  p.registered_by AS "registeredBy", p.registered_at AS "registeredAt"`;

/** Inserts a new version; null when (name, version) already exists (the caller compares bodies). */
export async function insertDomainPack(
  q: Queryable,
  pack: { name: string; version: string; body: unknown; bodyHash: string; registeredBy: string },
): Promise<DomainPackRow | null> {
  const { rows } = await run<DomainPackRow>(
    q,
    sql`/* insertDomainPack */
     INSERT INTO domain_packs AS p (name, version, body, body_hash, registered_by)
     VALUES (${pack.name}, ${pack.version}, ${pack.body}::jsonb, ${pack.bodyHash}, ${pack.registeredBy})
     ON CONFLICT (name, version) DO NOTHING
     RETURNING ${raw(PACK_COLUMNS)}`,
  );
  return rows[0] ?? null;
}

export async function findDomainPack(
  q: Queryable,
  name: string,
  version: string,
): Promise<DomainPackRow | null> {
  const { rows } = await run<DomainPackRow>(
    q,
    sql`/* findDomainPack */ SELECT ${raw(PACK_COLUMNS)} FROM domain_packs p WHERE p.name = ${name} AND p.version = ${version}`,
  );
  return rows[0] ?? null;
}

/** Packs by (name, version) pairs, in the order asked; null where not registered. */
export async function findDomainPacks(
  q: Queryable,
  refs: readonly { name: string; version: string }[],
): Promise<(DomainPackRow | null)[]> {
  if (refs.length === 0) return [];
  const { rows } = await run<DomainPackRow>(
    q,
    sql`/* findDomainPacks */
     SELECT ${raw(PACK_COLUMNS)} FROM domain_packs p
     JOIN unnest(${refs.map((r) => r.name)}::text[], ${refs.map((r) => r.version)}::text[]) AS r(name, version) ON r.name = p.name AND r.version = p.version`,
  );
  const byRef = new Map(rows.map((r) => [`${r.name}@${r.version}`, r]));
  return refs.map((r) => byRef.get(`${r.name}@${r.version}`) ?? null);
}

/** Every registered version (optionally of one name), by name then registration order. */
export async function listDomainPacks(
  q: Queryable,
  name: string | null,
  limit: number,
): Promise<DomainPackRow[]> {
  const nameParam = param(name);
  const { rows } = await run<DomainPackRow>(
    q,
    sql`/* listDomainPacks */
     SELECT ${raw(PACK_COLUMNS)} FROM domain_packs p
     WHERE (${nameParam}::text IS NULL OR p.name = ${nameParam})
     ORDER BY p.name COLLATE "C", p.registered_at, p.version COLLATE "C"
     LIMIT ${limit}`,
  );
  return rows;
}
