/**
 * Phase 2 of retrieval: the union of the channels' candidates (≤ 256) is read back with only
 * the columns packing needs — never an embedding (the cosine distance to the query is computed
 * in SQL when a query vector exists). One statement per kind, all namespaces at once, each
 * with the namespace predicate and `visibleTo`; rows are then kept only for the (namespace, id)
 * pairs asked for. Lookups are `= ANY` on primary/unique keys and correlated subqueries, plans
 * that do not depend on table statistics (PGlite has no autovacuum, so it never analyzes). Facts are read
 * with their hard-filter verdict so that a fact reached by any channel is still only served
 * when ACTIVE at `asOf`.
 */
import type { Queryable } from '../db/database.js';
import { EVIDENCE_RANK, type EvidenceClass } from '../domain/evidence.js';
import { relevantTo } from '../retrieval/channels/facts.js';
import { factVisibleTo, visibleTo } from '../store/visibility.js';
import {
  type BlockReason,
  type BlockedCandidate,
  type Candidate,
  candidateGlobalId,
  candidateKey,
} from './candidates.js';

export interface HydrateContext {
  asOf: Date;
  /** The query embedding as pgvector text, or null (no distance then). */
  queryVector: string | null;
  visibleScopes: string[] | null;
  /** Relevance scopes requested; null = no relevance filter. */
  scopes: string[] | null;
}

export interface Hydrated {
  candidates: Candidate[];
  blocked: BlockedCandidate[];
}

interface Pair {
  namespace: string;
  id: string;
}

const MAX_TEXT = 32_768;

// ------------------------------------------------------------------ chunks

interface ChunkPackRow {
  namespace: string;
  chunkId: number;
  nodeKey: string;
  kind: string;
  title: string | null;
  heading: string | null;
  text: string;
  sourcePath: string | null;
  scopes: string[];
  observationId: string | null;
  time: Date | null;
  pii: boolean;
  nodeTitle: string | null;
  distance: number | null;
  relevant: boolean;
}

export async function hydrateChunks(q: Queryable, refs: Pair[], ctx: HydrateContext): Promise<Hydrated> {
  if (refs.length === 0) return { candidates: [], blocked: [] };
  const { rows } = await q.query<ChunkPackRow>(
    `/* contextHydrateChunks */
     SELECT c.namespace, c.chunk_id AS "chunkId", c.node_key AS "nodeKey", c.kind, c.title, c.heading,
            left(c.text, ${MAX_TEXT}) AS text, c.source_path AS "sourcePath", c.scopes,
            c.observation_id AS "observationId", coalesce(c.occurred_at, c.created_at) AS time, c.pii,
            (SELECT e.title FROM entities e
              WHERE e.namespace = c.namespace AND e.key = c.node_key AND ${visibleTo('e', '$3')}) AS "nodeTitle",
            (c.embedding <=> $4::vector)::float8 AS distance,
            ${relevantTo('c', '$5')} AS relevant
     FROM chunks c
     WHERE c.namespace = ANY($1::text[]) AND c.chunk_id = ANY($2::bigint[]) AND ${visibleTo('c', '$3')}`,
    [
      distinct(refs.map((r) => r.namespace)),
      refs.map((r) => r.id),
      ctx.visibleScopes,
      ctx.queryVector,
      ctx.scopes,
    ],
  );
  const out: Hydrated = { candidates: [], blocked: [] };
  const wanted = pairSet(refs);
  for (const r of rows) {
    const id = String(r.chunkId);
    if (!wanted.has(pairKey(r.namespace, id))) continue;
    if (!r.relevant) {
      out.blocked.push(blocked('chunk', r.namespace, id, 'OUT_OF_SCOPE', r.scopes));
      continue;
    }
    out.candidates.push({
      key: candidateKey({ kind: 'chunk', namespace: r.namespace, id }),
      kind: 'chunk',
      namespace: r.namespace,
      localId: id,
      globalId: candidateGlobalId('chunk', r.namespace, id),
      // Episodes; an observation's own text (its chunk's node is the observation); documents.
      section:
        r.kind === 'episode'
          ? 'EPISODES'
          : r.observationId === r.nodeKey
            ? 'RECENT_OBSERVATIONS'
            : 'DOCUMENTS',
      title: r.heading ? `${r.title ?? r.nodeTitle ?? r.nodeKey} — ${r.heading}` : (r.title ?? r.nodeTitle),
      text: r.text,
      sourcePath: r.sourcePath,
      scopes: r.scopes,
      time: r.time ? new Date(r.time) : null,
      evidenceRank: 0,
      currentFact: false,
      conflict: false,
      conflictsWith: [],
      distance: r.distance ?? null,
      identifiers: [r.nodeKey, ...(r.sourcePath ? [r.sourcePath] : [])],
      entityKeys: r.observationId === r.nodeKey ? [] : [r.nodeKey],
      source: { key: r.nodeKey, title: r.nodeTitle ?? r.title ?? r.nodeKey, sourcePath: r.sourcePath },
      pii: r.pii,
    });
  }
  return out;
}

// ------------------------------------------------------------------ facts

interface FactPackRow {
  namespace: string;
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo: Date | null;
  evidence: EvidenceClass;
  status: string;
  conflict: boolean;
  conflictsWith: string[];
  sourcePath: string | null;
  scopes: string[];
  subjectTitle: string;
  objectTitle: string;
  pii: boolean;
  distance: number | null;
  verdict: BlockReason | null;
}

export async function hydrateFacts(q: Queryable, refs: Pair[], ctx: HydrateContext): Promise<Hydrated> {
  if (refs.length === 0) return { candidates: [], blocked: [] };
  // Endpoint titles and visibility by correlated lookups on the primary key: a plan that does
  // not depend on table statistics (PGlite never analyzes on its own).
  const { rows } = await q.query<FactPackRow>(
    `/* contextHydrateFacts */
     SELECT f.namespace, f.fact_id AS "factId", f.subject, f.predicate, f.object, f.valid_from AS "validFrom",
            f.valid_to AS "validTo", f.evidence, f.status, f.conflict, f.conflicts_with AS "conflictsWith",
            f.source_path AS "sourcePath", f.scopes, s.title AS "subjectTitle", o.title AS "objectTitle",
            (s.pii OR o.pii) AS pii,
            (SELECT min(c.embedding <=> $4::vector)::float8 FROM chunks c
              WHERE $4::vector IS NOT NULL AND c.namespace = f.namespace AND c.observation_id = ANY(f.observation_ids)
                AND c.observation_id IS NOT NULL AND ${visibleTo('c', '$3')}) AS distance,
            CASE
              WHEN f.status = 'EVIDENCE_LOST' THEN 'EVIDENCE_LOST'
              WHEN f.status = 'RETRACTED' THEN 'RETRACTED'
              WHEN f.valid_from > $5::timestamptz OR (f.valid_to IS NOT NULL AND f.valid_to <= $5::timestamptz)
                THEN CASE WHEN f.status = 'SUPERSEDED' THEN 'SUPERSEDED' ELSE 'NOT_VALID_AT_AS_OF' END
              WHEN NOT ${relevantTo('f', '$6')} THEN 'OUT_OF_SCOPE'
            END AS verdict
     FROM facts f
     CROSS JOIN LATERAL (SELECT e.title, e.pii FROM entities e
                         WHERE e.namespace = f.namespace AND e.key = f.subject AND ${visibleTo('e', '$3')}) s
     CROSS JOIN LATERAL (SELECT e.title, e.pii FROM entities e
                         WHERE e.namespace = f.namespace AND e.key = f.object AND ${visibleTo('e', '$3')}) o
     WHERE f.namespace = ANY($1::text[]) AND f.fact_id = ANY($2::text[]) AND ${factVisibleTo('f', '$3')}`,
    [
      distinct(refs.map((r) => r.namespace)),
      refs.map((r) => r.id),
      ctx.visibleScopes,
      ctx.queryVector,
      ctx.asOf,
      ctx.scopes,
    ],
  );
  const out: Hydrated = { candidates: [], blocked: [] };
  const wanted = pairSet(refs);
  for (const r of rows) {
    if (!wanted.has(pairKey(r.namespace, r.factId))) continue;
    if (r.verdict) {
      out.blocked.push(blocked('fact', r.namespace, r.factId, r.verdict, r.scopes));
      continue;
    }
    const validFrom = new Date(r.validFrom);
    const validTo = r.validTo ? new Date(r.validTo) : null;
    out.candidates.push({
      key: candidateKey({ kind: 'fact', namespace: r.namespace, id: r.factId }),
      kind: 'fact',
      namespace: r.namespace,
      localId: r.factId,
      globalId: candidateGlobalId('fact', r.namespace, r.factId),
      section: 'RELEVANT_FACTS',
      title: r.subjectTitle,
      text: factSentence(r.subjectTitle, r.predicate, r.objectTitle, validFrom, validTo, r.conflict),
      sourcePath: r.sourcePath,
      scopes: r.scopes,
      time: validFrom,
      evidenceRank: EVIDENCE_RANK[r.evidence] ?? 0,
      currentFact: validTo === null,
      conflict: r.conflict,
      conflictsWith: r.conflictsWith,
      distance: r.distance ?? null,
      identifiers: [r.factId, r.subject, r.object],
      entityKeys: [r.subject, r.object],
      source: r.sourcePath ? { key: r.subject, title: r.subjectTitle, sourcePath: r.sourcePath } : null,
      pii: r.pii,
    });
  }
  return out;
}

/** `Alice works_on Apollo (valid 2024-01-01 → now)`, plus the conflict marker. */
export function factSentence(
  subject: string,
  predicate: string,
  object: string,
  validFrom: Date,
  validTo: Date | null,
  conflict: boolean,
): string {
  const interval = `valid ${formatInstant(validFrom)} → ${validTo ? formatInstant(validTo) : 'now'}`;
  const marker = conflict ? ' [CONFLICT: another version is also served]' : '';
  return `${subject} ${predicate} ${object} (${interval})${marker}`;
}

/** A date when the instant is a UTC midnight, else minute precision. */
export function formatInstant(d: Date): string {
  const iso = d.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : `${iso.slice(0, 16)}Z`;
}

// ------------------------------------------------------------------ observations

interface ObservationPackRow {
  namespace: string;
  observationId: string;
  kind: string;
  sourceSystem: string;
  sourceStream: string | null;
  sourceExternalId: string | null;
  occurredAt: Date;
  scopes: string[];
  text: string;
  pii: boolean;
  distance: number | null;
  relevant: boolean;
}

export async function hydrateObservations(
  q: Queryable,
  refs: Pair[],
  ctx: HydrateContext,
): Promise<Hydrated> {
  if (refs.length === 0) return { candidates: [], blocked: [] };
  const { rows } = await q.query<ObservationPackRow>(
    `/* contextHydrateObservations */
     SELECT o.namespace, o.observation_id AS "observationId", o.kind, o.source_system AS "sourceSystem",
            o.source_stream AS "sourceStream", o.source_external_id AS "sourceExternalId",
            o.occurred_at AS "occurredAt", o.scopes,
            left(coalesce(o.content, o.data::text, ''), ${MAX_TEXT}) AS text, o.pii,
            (SELECT min(c.embedding <=> $4::vector)::float8 FROM chunks c
              WHERE $4::vector IS NOT NULL AND c.namespace = o.namespace AND c.observation_id = o.observation_id
                AND ${visibleTo('c', '$3')}) AS distance,
            ${relevantTo('o', '$5')} AS relevant
     FROM observations o
     WHERE o.namespace = ANY($1::text[]) AND o.observation_id = ANY($2::text[]) AND ${visibleTo('o', '$3')}
       AND o.status <> 'REDACTED'`,
    [
      distinct(refs.map((r) => r.namespace)),
      refs.map((r) => r.id),
      ctx.visibleScopes,
      ctx.queryVector,
      ctx.scopes,
    ],
  );
  const out: Hydrated = { candidates: [], blocked: [] };
  const wanted = pairSet(refs);
  for (const r of rows) {
    if (!wanted.has(pairKey(r.namespace, r.observationId))) continue;
    if (!r.relevant) {
      out.blocked.push(blocked('observation', r.namespace, r.observationId, 'OUT_OF_SCOPE', r.scopes));
      continue;
    }
    const occurredAt = new Date(r.occurredAt);
    const source = r.sourceStream ? `${r.sourceSystem}/${r.sourceStream}` : r.sourceSystem;
    out.candidates.push({
      key: candidateKey({ kind: 'observation', namespace: r.namespace, id: r.observationId }),
      kind: 'observation',
      namespace: r.namespace,
      localId: r.observationId,
      globalId: candidateGlobalId('observation', r.namespace, r.observationId),
      section: 'RECENT_OBSERVATIONS',
      title: `${r.kind} · ${source} · ${formatInstant(occurredAt)}`,
      text: r.text,
      sourcePath: null,
      scopes: r.scopes,
      time: occurredAt,
      evidenceRank: 0,
      currentFact: false,
      conflict: false,
      conflictsWith: [],
      distance: r.distance ?? null,
      identifiers: [r.observationId, ...(r.sourceExternalId ? [r.sourceExternalId] : [])],
      entityKeys: [],
      source: null,
      pii: r.pii,
    });
  }
  return out;
}

// ------------------------------------------------------------------ entities

interface EntityPackRow {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  attributes: string;
  scopes: string[];
  sourcePath: string | null;
  pii: boolean;
  time: Date | null;
  relevant: boolean;
}

export async function hydrateEntities(q: Queryable, refs: Pair[], ctx: HydrateContext): Promise<Hydrated> {
  if (refs.length === 0) return { candidates: [], blocked: [] };
  const { rows } = await q.query<EntityPackRow>(
    `/* contextHydrateEntities */
     SELECT e.namespace, e.key, e.kind, coalesce(v.title, e.title) AS title,
            left(coalesce(v.attributes, e.attributes)::text, 2000) AS attributes, e.scopes,
            e.source_path AS "sourcePath", e.pii, coalesce(e.last_seen, e.updated_at) AS time,
            ${relevantTo('e', '$5')} AS relevant
     FROM entities e
     LEFT JOIN LATERAL (
       SELECT ev.title, ev.attributes FROM entity_versions ev
       WHERE ev.namespace = e.namespace AND ev.key = e.key AND ev.valid_from <= $4::timestamptz
         AND (ev.valid_to IS NULL OR ev.valid_to > $4::timestamptz)
       ORDER BY ev.valid_from DESC LIMIT 1
     ) v ON true
     WHERE e.namespace = ANY($1::text[]) AND e.key = ANY($2::text[]) AND ${visibleTo('e', '$3')}
       AND NOT e.placeholder`,
    [distinct(refs.map((r) => r.namespace)), refs.map((r) => r.id), ctx.visibleScopes, ctx.asOf, ctx.scopes],
  );
  const out: Hydrated = { candidates: [], blocked: [] };
  const wanted = pairSet(refs);
  for (const r of rows) {
    // Keys are unique per namespace only: keep the (namespace, key) pairs that were asked for.
    if (!wanted.has(pairKey(r.namespace, r.key))) continue;
    if (!r.relevant) {
      out.blocked.push(blocked('entity', r.namespace, r.key, 'OUT_OF_SCOPE', r.scopes));
      continue;
    }
    out.candidates.push({
      key: candidateKey({ kind: 'entity', namespace: r.namespace, id: r.key }),
      kind: 'entity',
      namespace: r.namespace,
      localId: r.key,
      globalId: candidateGlobalId('entity', r.namespace, r.key),
      section: 'RELATED_ENTITIES',
      title: r.title,
      text: entityLine(r.title, r.kind, r.key, r.attributes),
      sourcePath: r.sourcePath,
      scopes: r.scopes,
      time: r.time ? new Date(r.time) : null,
      evidenceRank: 0,
      currentFact: false,
      conflict: false,
      conflictsWith: [],
      distance: null,
      identifiers: [r.key],
      entityKeys: [r.key],
      source: { key: r.key, title: r.title, sourcePath: r.sourcePath },
      pii: r.pii,
    });
  }
  return out;
}

/** `Alice (person, person:alice) — role: engineer; team: core`. */
export function entityLine(title: string, kind: string, key: string, attributesJson: string): string {
  let attrs = '';
  try {
    const parsed = JSON.parse(attributesJson) as Record<string, unknown>;
    attrs = Object.entries(parsed)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join('; ');
  } catch {
    // Cut by `left()` in SQL: show nothing rather than broken JSON.
  }
  const head = title === key ? `${title} (${kind})` : `${title} (${kind}, ${key})`;
  const line = attrs ? `${head} — ${attrs}` : head;
  return line.length > 600 ? `${line.slice(0, 599)}…` : line;
}

function pairKey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

function pairSet(refs: Pair[]): Set<string> {
  return new Set(refs.map((r) => pairKey(r.namespace, r.id)));
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

function blocked(
  kind: BlockedCandidate['kind'],
  namespace: string,
  id: string,
  reason: BlockReason,
  scopes: string[],
): BlockedCandidate {
  return {
    scopes,
    key: candidateKey({ kind, namespace, id }),
    kind,
    namespace,
    globalId: candidateGlobalId(kind, namespace, id),
    reason,
  };
}
