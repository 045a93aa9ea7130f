/**
 * What holds at `asOf` for the entities a query names: the entities (anchors and subject by key;
 * names of the query through the title's first or last word and the key, the equality probes of
 * migration 018), their attributes as of `asOf` with the versions before, and their facts — the
 * ones valid at `asOf` and the ones closed by then (history). One bounded statement; namespace,
 * visibility (a fact only with both endpoints), relevance scopes and what memory held at `asOf`
 * are in its SQL like every channel's.
 */
import type { Queryable } from '../../../db/database.js';
import { namedIn } from '../../../kernel/store/entity-link-store.js';
import { type SqlFragment, param, run, sql } from '../../../kernel/store/sql.js';
import { factHeld, factVisible, inNamespaces, relevant, visible } from '../../../kernel/store/visibility.js';
import { DOCUMENT_LINK_ORIGIN } from '../../documents/index.js';

/** Kinds the gateway writes for its own bookkeeping (and documents): never the subject of a state. */
const NOT_STATE_KINDS = ['observation', 'episode', 'document', 'session'];

export interface CurrentStateInput {
  namespaces: string[];
  /** Keys asked for (anchors, subject): always read, first. */
  keys: string[];
  /** Lower-cased words of the query an entity's title may start or end with. */
  names: string[];
  /** The query: a title or alias it holds whole names its entity outright. */
  query: string | null;
  asOf: Date;
  /** What memory held at this instant (null = now, no bound). */
  heldAt: Date | null;
  scopes: string[] | null;
  maxEntities: number;
  /** Facts per entity and side, newest first (current and closed together). */
  perEntity: number;
}

export interface StateEntityRow {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  /** 0 asked for, 1 named whole in the query, 2 named by one word of its title. */
  prio: number;
  pii: boolean;
  scopes: string[];
  /** Attributes as of `asOf` (null: none known then). */
  attributes: Record<string, unknown> | null;
  since: string | null;
  /** Earlier versions, newest first: attributes and when they stopped holding. */
  previous: { attributes: Record<string, unknown>; validFrom: string; validTo: string }[];
  /** Its richest stored summary this reader may see (entities asked for or named whole), if any. */
  summary: StateSummaryRow | null;
}

export interface StateSummaryRow {
  chunkId: number;
  text: string;
  pii: boolean;
  scopes: string[];
  builtAt: string;
}

export interface StateFactRow {
  namespace: string;
  factId: string;
  entity: string;
  subject: string;
  predicate: string;
  object: string;
  subjectTitle: string;
  objectTitle: string;
  validFrom: string;
  /** As memory held it at `heldAt` (an end learned later is not shown). */
  validTo: string | null;
  /** Valid at `asOf` (else closed by then: history). */
  current: boolean;
  status: string;
  conflict: boolean;
  conflictsWith: string[];
  supersededBy: string | null;
  structural: boolean;
  evidence: string;
  pii: boolean;
  scopes: string[];
  sourcePath: string | null;
  /** Position among the arrivals (recorded_at, then id): breaks ties of equal validFrom. */
  recordedAt: string;
}

export interface CurrentStateRows {
  entities: StateEntityRow[];
  facts: StateFactRow[];
}

function namedEntities(input: CurrentStateInput, visibleScopes: string[] | null): SqlFragment {
  const ns = input.namespaces;
  return sql`SELECT DISTINCT ON (m.namespace, m.key) m.* FROM (
       SELECT e.namespace, e.key, 0 AS prio FROM entities e
       WHERE ${inNamespaces('e', ns)} AND e.key = ANY(${input.keys}::text[]) AND ${visible('e', visibleScopes)}
       UNION ALL
       SELECT e.namespace, e.key, CASE WHEN ${namedIn('e', input.query)} THEN 1 ELSE 2 END
       FROM unnest(${input.names}::text[]) AS n(name)
       JOIN entities e ON ${inNamespaces('e', ns)}
         AND (lower(split_part(e.title, ' ', 1)) = n.name
              OR lower(reverse(split_part(reverse(e.title), ' ', 1))) = n.name
              OR e.key = n.name)
       WHERE NOT (e.kind = ANY(${NOT_STATE_KINDS}::text[])) AND NOT e.placeholder AND ${visible('e', visibleScopes)}
     ) m ORDER BY m.namespace, m.key, m.prio`;
}

export async function currentStateOf(
  q: Queryable,
  input: CurrentStateInput,
  visibleScopes: string[] | null,
): Promise<CurrentStateRows> {
  if (input.keys.length === 0 && input.names.length === 0) return { entities: [], facts: [] };
  const asOf = param(input.asOf);
  const heldAt = param(input.heldAt);
  const perEntity = param(input.perEntity);
  // Facts that started by asOf and are neither retracted nor without evidence: current or closed.
  const facts = sql`f.status IN ('ACTIVE', 'SUPERSEDED') AND f.valid_from <= ${asOf}::timestamptz
         AND ${factHeld('f', input.heldAt)} AND ${factVisible('f', visibleScopes)} AND ${relevant('f', input.scopes)}`;
  const { rows } = await run<CurrentStateRows>(
    q,
    sql`/* currentState */
     WITH picked AS MATERIALIZED (
       SELECT n.namespace, n.key, n.prio FROM (${namedEntities(input, visibleScopes)}) n
       ORDER BY n.prio, n.key LIMIT ${param(input.maxEntities)}
     ), ents AS (
       SELECT p.prio, e.namespace, e.key, e.kind, e.title, e.pii, e.scopes, v.attributes, v.valid_from AS since,
              (SELECT coalesce(json_agg(json_build_object('attributes', pv.attributes, 'validFrom', pv.valid_from,
                                                          'validTo', pv.valid_to) ORDER BY pv.valid_from DESC), '[]'::json)
               FROM (SELECT * FROM entity_versions ev
                     WHERE ev.namespace = e.namespace AND ev.key = e.key AND ev.valid_to <= ${asOf}::timestamptz
                     ORDER BY ev.valid_from DESC LIMIT 4) pv) AS previous,
              -- A summary states what holds when it was built: served for packs as of then or later.
              (SELECT json_build_object('chunkId', sc.chunk_id, 'text', sc.text, 'pii', sc.pii, 'scopes', sc.scopes,
                                          'builtAt', sc.meta->>'builtAt')
                 FROM chunks sc
                 WHERE p.prio <= 1 AND sc.namespace = e.namespace AND sc.node_key = e.key AND sc.kind = 'summary'
                   AND (sc.meta->>'builtAt')::timestamptz <= ${asOf}::timestamptz AND ${visible('sc', visibleScopes)}
                 ORDER BY jsonb_array_length(sc.meta->'sources'->'facts')
                          + jsonb_array_length(sc.meta->'sources'->'observations') DESC, sc.ord DESC
                 LIMIT 1) AS summary
       FROM picked p
       JOIN entities e ON e.namespace = p.namespace AND e.key = p.key
       LEFT JOIN LATERAL (
         SELECT ev.attributes, ev.valid_from FROM entity_versions ev
         WHERE ev.namespace = e.namespace AND ev.key = e.key AND ev.valid_from <= ${asOf}::timestamptz
           AND (ev.valid_to IS NULL OR ev.valid_to > ${asOf}::timestamptz)
         ORDER BY ev.valid_from DESC LIMIT 1
       ) v ON true
     ), around AS (
       SELECT DISTINCT ON (x.namespace, x.fact_id) x.*, p.key AS entity FROM picked p
       CROSS JOIN LATERAL (
         (SELECT f.* FROM facts f WHERE f.namespace = p.namespace AND f.subject = p.key AND ${facts}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${perEntity})
         UNION ALL
         (SELECT f.* FROM facts f WHERE f.namespace = p.namespace AND f.object = p.key AND f.subject <> p.key AND ${facts}
          ORDER BY f.valid_from DESC, f.fact_id DESC LIMIT ${perEntity})
       ) x
       ORDER BY x.namespace, x.fact_id, p.prio
     ), fact_rows AS (
       SELECT a.namespace, a.fact_id AS "factId", a.entity, a.subject, a.predicate, a.object,
              s.title AS "subjectTitle", o.title AS "objectTitle", a.valid_from AS "validFrom",
              CASE WHEN a.valid_to > ${heldAt}::timestamptz THEN NULL ELSE a.valid_to END AS "validTo",
              (a.valid_to IS NULL OR a.valid_to > ${asOf}::timestamptz) AS current,
              a.status, a.conflict, a.conflicts_with AS "conflictsWith", a.superseded_by AS "supersededBy",
              (a.attributes->>'origin') IS NOT DISTINCT FROM ${DOCUMENT_LINK_ORIGIN} AS structural,
              a.evidence, (s.pii OR o.pii) AS pii, a.scopes, a.source_path AS "sourcePath", a.recorded_at AS "recordedAt"
       FROM around a
       JOIN entities s ON s.namespace = a.namespace AND s.key = a.subject
       JOIN entities o ON o.namespace = a.namespace AND o.key = a.object
     )
     SELECT (SELECT coalesce(json_agg(ents ORDER BY ents.prio, ents.key), '[]'::json) FROM ents) AS entities,
            (SELECT coalesce(json_agg(fact_rows), '[]'::json) FROM fact_rows) AS facts`,
  );
  const row = rows[0];
  return { entities: row?.entities ?? [], facts: row?.facts ?? [] };
}
