/**
 * The multi-hop pass of a compilation in ONE statement: per entity name, the lexical ranking of
 * the name (store/lexical-store.ts), and the facts around entities whose title or key names it.
 */
import type { Queryable } from '../db/database.js';
import { type ChunkFilterValues, lexicalRanking } from './lexical-store.js';
import {
  type SqlFragment,
  factVisible,
  inNamespaces,
  join,
  raw,
  relevant,
  run,
  sql,
  validAt,
  visible,
  factHeld,
} from './sql.js';

export interface MultiHopInput {
  filter: ChunkFilterValues;
  names: string[];
  /** Chunks per name, and facts per name. */
  perName: number;
  lexical: { k1: number; b: number; maxTerms: number };
  asOf: Date;
  /** Relevance scopes; null = no relevance filter. */
  scopes: string[] | null;
}

export interface MultiHopRow {
  kind: 'chunk' | 'fact';
  /** Index of the name in `names`. */
  nameIndex: number;
  namespace: string;
  id: string;
  score: number | null;
  pos: number;
}

/** Facts that may be served (never EVIDENCE_LOST here), visible with both endpoints. */
function servedFact(input: MultiHopInput, visibleScopes: string[] | null): SqlFragment {
  return sql`${validAt('f', input.asOf)} AND f.status <> 'EVIDENCE_LOST' AND ${factHeld('f', input.filter.asOf)}
    AND ${factVisible('f', visibleScopes)}
    AND ${relevant('f', input.scopes)}`;
}

/**
 * Facts around entities named by each name: a few entities per name, then per entity the newest
 * facts on each side through the (namespace, subject|object, valid_from) indexes. Every branch
 * of the entity match is indexable — title patterns through the trigram index, the key by
 * equality on the primary key (as written or lower-cased; names are single capitalised words) —
 * so the match is a BitmapOr; a key pattern (`key ILIKE name`) had no index and made it a
 * sequential scan of all entities (~400 ms at 100k entities). The ORDER BY makes the four
 * entities deterministic, and keeps the planner from betting on a sequential scan that stops
 * early under the LIMIT.
 */
function factsNamingEntities(input: MultiHopInput, visibleScopes: string[] | null): SqlFragment {
  const served = servedFact(input, visibleScopes);
  return sql`SELECT x.namespace, x.fact_id AS id, n.i AS "nameIndex",
            row_number() OVER (ORDER BY n.name, x.valid_from DESC, x.fact_id) AS pos
     FROM unnest(${input.names}::text[]) WITH ORDINALITY AS n(name, i)
     CROSS JOIN LATERAL (
       SELECT e.namespace, e.key FROM entities e
       WHERE ${inNamespaces('e', input.filter.namespaces)}
         AND (e.title ILIKE n.name OR e.title ILIKE n.name || ' %' OR e.title ILIKE '% ' || n.name
              OR (${inNamespaces('e', input.filter.namespaces)} AND e.key IN (n.name, lower(n.name))))
         AND ${visible('e', visibleScopes)}
       ORDER BY e.key, e.namespace
       LIMIT 4
     ) e
     CROSS JOIN LATERAL (
       (SELECT f.namespace, f.fact_id, f.valid_from FROM facts f
        WHERE f.namespace = e.namespace AND f.subject = e.key AND ${served}
        ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${input.perName})
       UNION ALL
       (SELECT f.namespace, f.fact_id, f.valid_from FROM facts f
        WHERE f.namespace = e.namespace AND f.object = e.key AND f.subject <> e.key AND ${served}
        ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${input.perName})
     ) x`;
}

export async function multiHopCandidates(
  q: Queryable,
  input: MultiHopInput,
  visibleScopes: string[] | null,
): Promise<MultiHopRow[]> {
  if (input.names.length === 0) return [];
  const chunkLists = input.names.map(
    (name, i) => sql`SELECT 'chunk' AS kind, ${raw(String(i + 1))} AS "nameIndex", l.namespace,
            l."chunkId"::text AS id, l.score::float8 AS score, l.pos
     FROM (${lexicalRanking({ filter: input.filter, query: name, limit: input.perName, prefilter: null, ...input.lexical })}) l`,
  );
  const facts = sql`SELECT 'fact' AS kind, f."nameIndex", f.namespace, f.id, NULL::float8 AS score, f.pos
     FROM (${factsNamingEntities(input, visibleScopes)}) f`;
  const { rows } = await run<{
    kind: 'chunk' | 'fact';
    nameIndex: unknown;
    namespace: string;
    id: string;
    score: unknown;
    pos: unknown;
  }>(
    q,
    sql`/* contextMultiHop */
     ${join([...chunkLists, facts], '\n     UNION ALL\n     ')}
     ORDER BY kind, "nameIndex", pos`,
  );
  return rows.map((r) => ({
    kind: r.kind,
    nameIndex: Number(r.nameIndex) - 1,
    namespace: r.namespace,
    id: r.id,
    score: r.score === null ? null : Number(r.score),
    pos: Number(r.pos),
  }));
}
