/**
 * The multi-hop pass of a compilation in ONE statement: per entity name, the lexical ranking of
 * the name (store/lexical-store.ts), and the facts around entities whose title or key names it;
 * the same statement reads the hits back as candidates (store/candidate-store.ts), which saves
 * the compilation a round trip and a statement to plan.
 */
import type { Queryable } from '../../../db/database.js';
import {
  type CandidateReadContext,
  type CandidateRows,
  candidateBranches,
  candidateRowsOf,
} from './candidate-store.js';
import { type ChunkFilterValues, lexicalRanking } from './lexical-store.js';
import { type SqlFragment, join, raw, run, sql } from '../../../kernel/store/sql.js';
import {
  factVisible,
  inNamespaces,
  relevant,
  validAt,
  visible,
  factHeld,
} from '../../../kernel/store/visibility.js';

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
 * of the entity match is indexable — the title's first or last word (lower-cased, migration
 * 018: a title that is, starts or ends with the name has it as one of them; the ILIKE patterns
 * then check exactly), the key by equality on the primary key (as written or lower-cased; names
 * are single capitalised words, never an ILIKE wildcard) — so the match is a BitmapOr of
 * equality probes; a key pattern (`key ILIKE name`) had no index and made it a sequential scan
 * of all entities (~400 ms at 100k entities), and the title patterns through the trigram index
 * read ~4 ms of posting lists per name. The ORDER BY makes the four
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
         AND (lower(split_part(e.title, ' ', 1)) = lower(n.name)
              OR lower(reverse(split_part(reverse(e.title), ' ', 1))) = lower(n.name)
              OR (${inNamespaces('e', input.filter.namespaces)} AND e.key IN (n.name, lower(n.name))))
         AND (e.title ILIKE n.name OR e.title ILIKE n.name || ' %' OR e.title ILIKE '% ' || n.name
              OR e.key IN (n.name, lower(n.name)))
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

export interface MultiHopResult {
  rows: MultiHopRow[];
  /** Every hit read back as a candidate (hits a hard filter hides have no row). */
  candidates: CandidateRows;
}

/**
 * Per name its chunks (lexical) and its facts: each fact counted for the first name (by `pos`)
 * that reaches it, and at most `perName` facts per name — so that only hits the channel keeps
 * are read back.
 */
function hopHits(input: MultiHopInput, visibleScopes: string[] | null): SqlFragment {
  const chunkLists = input.names.map(
    (name, i) => sql`SELECT 'chunk' AS kind, ${raw(String(i + 1))} AS "nameIndex", l.namespace,
            l."chunkId"::text AS id, l.score::float8 AS score, l.pos
     FROM (${lexicalRanking({ filter: input.filter, query: name, limit: input.perName, prefilter: null, ...input.lexical })}) l`,
  );
  const facts = sql`SELECT 'fact' AS kind, f."nameIndex", f.namespace, f.id, NULL::float8 AS score, f.pos
     FROM (
       SELECT g.*, row_number() OVER (PARTITION BY g."nameIndex" ORDER BY g.pos) AS nth
       FROM (SELECT DISTINCT ON (a.namespace, a.id) a.* FROM (${factsNamingEntities(input, visibleScopes)}) a
             ORDER BY a.namespace, a.id, a.pos) g
     ) f
     WHERE f.nth <= ${input.perName}`;
  return join([...chunkLists, facts], '\n     UNION ALL\n     ');
}

export async function multiHopCandidates(
  q: Queryable,
  input: MultiHopInput,
  visibleScopes: string[] | null,
  read: CandidateReadContext,
): Promise<MultiHopResult> {
  if (input.names.length === 0) return { rows: [], candidates: candidateRowsOf([]) };
  const candidates = candidateBranches(
    {
      chunk: {
        namespaces: input.filter.namespaces,
        ids: sql`ARRAY(SELECT h.id::bigint FROM hop h WHERE h.kind = 'chunk')`,
      },
      fact: {
        namespaces: input.filter.namespaces,
        ids: sql`ARRAY(SELECT h.id FROM hop h WHERE h.kind = 'fact')`,
      },
    },
    read,
  );
  const { rows } = await run<{ kind: string; row: unknown }>(
    q,
    sql`/* contextMultiHop */
     WITH hop AS MATERIALIZED (
     ${hopHits(input, visibleScopes)}
     )
     SELECT 'hop' AS kind, to_jsonb(h) AS row FROM hop h
     UNION ALL
     ${join(candidates, '\n     UNION ALL\n     ')}`,
  );
  const hops = rows
    .filter((r) => r.kind === 'hop')
    .map((r) => {
      const h = (typeof r.row === 'string' ? JSON.parse(r.row) : r.row) as {
        kind: 'chunk' | 'fact';
        nameIndex: unknown;
        namespace: string;
        id: string;
        score: unknown;
        pos: unknown;
      };
      return {
        kind: h.kind,
        nameIndex: Number(h.nameIndex) - 1,
        namespace: h.namespace,
        id: h.id,
        score: h.score === null ? null : Number(h.score),
        pos: Number(h.pos),
      };
    })
    .sort((a, b) =>
      a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.nameIndex - b.nameIndex || a.pos - b.pos,
    );
  return { rows: hops, candidates: candidateRowsOf(rows) };
}
