import type { Queryable } from '../../../db/database.js';
import { run, sql } from '../../../kernel/store/sql.js';

/** Per-namespace settings: the enabled domain packs (`name@version`) and strict mode. */
export interface NamespaceSettingsRow {
  namespace: string;
  packs: string[];
  strict: boolean;
  updatedAt: Date;
}

export interface NamespacePackRow {
  ref: string;
  body: Record<string, unknown> | null;
  bodyHash: string | null;
}

export async function findNamespaceSettings(
  q: Queryable,
  namespace: string,
): Promise<NamespaceSettingsRow | null> {
  const { rows } = await run<NamespaceSettingsRow>(
    q,
    sql`/* findNamespaceSettings */
     SELECT namespace, packs, strict, updated_at AS "updatedAt" FROM namespace_settings WHERE namespace = ${namespace}`,
  );
  return rows[0] ?? null;
}

/** Sets packs and strict mode; the namespace's other settings (text search, predicates) stay. */
export async function saveNamespaceSettings(
  q: Queryable,
  namespace: string,
  packs: readonly string[],
  strict: boolean,
): Promise<NamespaceSettingsRow> {
  const { rows } = await run<NamespaceSettingsRow>(
    q,
    sql`/* saveNamespaceSettings */
     INSERT INTO namespace_settings AS s (namespace, packs, strict) VALUES (${namespace}, ${packs}::text[], ${strict})
     ON CONFLICT (namespace) DO UPDATE SET packs = excluded.packs, strict = excluded.strict, updated_at = now()
     RETURNING s.namespace, s.packs, s.strict, s.updated_at AS "updatedAt"`,
  );
  return rows[0]!;
}

/**
 * Strict mode and the enabled packs' bodies in one statement (what schema checks load once per
 * request and namespace). Packs come back in the configured order; a body is null if the pack
 * is missing from the registry. Null when the namespace has no settings row.
 */
export async function loadNamespacePacks(
  q: Queryable,
  namespace: string,
): Promise<{ strict: boolean; packs: NamespacePackRow[] } | null> {
  const { rows } = await run<{
    strict: boolean;
    ref: string | null;
    body: Record<string, unknown> | null;
    bodyHash: string | null;
  }>(
    q,
    sql`/* loadNamespacePacks */
     SELECT s.strict, r.ref, p.body, p.body_hash AS "bodyHash"
     FROM namespace_settings s
     LEFT JOIN LATERAL unnest(s.packs) WITH ORDINALITY AS r(ref, ord) ON true
     LEFT JOIN domain_packs p ON p.name = split_part(r.ref, '@', 1) AND p.version = split_part(r.ref, '@', 2)
     WHERE s.namespace = ${namespace}
     ORDER BY r.ord`,
  );
  if (rows.length === 0) return null;
  return {
    strict: rows[0]!.strict,
    packs: rows
      .filter((r) => r.ref !== null)
      .map((r) => ({ ref: r.ref!, body: r.body, bodyHash: r.bodyHash })),
  };
}

/**
 * Adds `predicate` to (one) or removes it from (many) the namespace's single-valued predicates;
 * returns the list before and after. Packs, strict mode and text search stay as they are.
 */
export async function setSingleValuedPredicate(
  q: Queryable,
  namespace: string,
  predicate: string,
  one: boolean,
): Promise<{ before: string[]; after: string[] }> {
  const { rows } = await q.query<{ before: string[] | null; after: string[] }>(
    `/* setSingleValuedPredicate */
     WITH prior AS (SELECT single_valued_predicates AS list FROM namespace_settings WHERE namespace = $1 FOR UPDATE)
     INSERT INTO namespace_settings AS s (namespace, single_valued_predicates)
     VALUES ($1, CASE WHEN $3 THEN ARRAY[$2::text] ELSE '{}'::text[] END)
     ON CONFLICT (namespace) DO UPDATE SET single_valued_predicates = (
       SELECT coalesce(array_agg(DISTINCT p ORDER BY p), '{}')
       FROM unnest(array_remove(s.single_valued_predicates, $2::text) || CASE WHEN $3 THEN ARRAY[$2::text] ELSE '{}'::text[] END) p
     ), updated_at = now()
     RETURNING (SELECT list FROM prior) AS before, s.single_valued_predicates AS after`,
    [namespace, predicate, one],
  );
  return { before: rows[0]?.before ?? [], after: rows[0]!.after };
}

/** The namespace's own single-valued predicates (packs' `cardinality: one` aside). */
export async function findSingleValuedPredicates(q: Queryable, namespace: string): Promise<string[]> {
  const { rows } = await q.query<{ list: string[] }>(
    `/* findSingleValuedPredicates */
     SELECT single_valued_predicates AS list FROM namespace_settings WHERE namespace = $1`,
    [namespace],
  );
  return rows[0]?.list ?? [];
}
