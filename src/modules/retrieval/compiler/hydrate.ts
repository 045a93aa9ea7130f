/**
 * Stage 3, hydrate: the candidates of a compilation read back (one statement for every kind,
 * see store/candidate-store.ts) and turned into what scoring, packing and rendering need.
 * Hard filters happened in SQL; here rows become candidates or BLOCKED ones.
 */
import type { Queryable } from '../../../db/database.js';
import { chunkSection } from '../pipeline/chunk-section.js';
import { EVIDENCE_RANK } from '../../../domain/evidence.js';
import {
  type CandidatePairs,
  type CandidateReadContext,
  type CandidateRows,
  type ChunkCandidateRow,
  type EntityCandidateRow,
  type FactCandidateRow,
  type ObservationCandidateRow,
  readCandidates,
} from '../store/candidate-store.js';
import {
  type BlockReason,
  type BlockedCandidate,
  type Candidate,
  candidateGlobalId,
  candidateKey,
} from './candidates.js';

export type HydrateContext = CandidateReadContext;

export interface Hydrated {
  candidates: Candidate[];
  blocked: BlockedCandidate[];
}

interface Pair {
  namespace: string;
  id: string;
}

/**
 * Reads every pair of `pairs` in one statement and maps the rows; candidates come out in the
 * fixed kind order chunk, fact, observation, entity (the trace's blocked list depends on it).
 */
export async function hydrateCandidates(
  q: Queryable,
  pairs: CandidatePairs,
  ctx: HydrateContext,
): Promise<Hydrated> {
  return candidatesOfRows(await readCandidates(q, pairs, ctx), pairs);
}

/** Rows read for `pairs` as candidates and blocked ones (rows of other pairs are dropped). */
export function candidatesOfRows(rows: CandidateRows, pairs: CandidatePairs): Hydrated {
  const parts = [
    chunkCandidates(rows.chunk, pairs.chunk),
    factCandidates(rows.fact, pairs.fact),
    observationCandidates(rows.observation, pairs.observation),
    entityCandidates(rows.entity, pairs.entity),
  ];
  return {
    candidates: parts.flatMap((h) => h.candidates),
    blocked: parts.flatMap((h) => h.blocked),
  };
}

// ------------------------------------------------------------------ chunks

export function chunkCandidates(rows: ChunkCandidateRow[], refs: Pair[]): Hydrated {
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
      section: chunkSection(r),
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
      namedEntities: r.namedEntities ?? [],
      entityKeys: r.observationId === r.nodeKey ? [] : [r.nodeKey],
      source: { key: r.nodeKey, title: r.nodeTitle ?? r.title ?? r.nodeKey, sourcePath: r.sourcePath },
      pii: r.pii,
    });
  }
  return out;
}

// ------------------------------------------------------------------ facts

export function factCandidates(rows: FactCandidateRow[], refs: Pair[]): Hydrated {
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
      // A document link's validFrom is when the document was written, not news: no freshness.
      time: r.structural ? null : validFrom,
      evidenceRank: EVIDENCE_RANK[r.evidence] ?? 0,
      currentFact: validTo === null,
      conflict: r.conflict,
      conflictsWith: r.conflictsWith,
      distance: r.distance ?? null,
      identifiers: [r.factId, r.subject, r.object],
      namedEntities: [],
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

export function observationCandidates(rows: ObservationCandidateRow[], refs: Pair[]): Hydrated {
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
      namedEntities: r.namedEntities ?? [],
      entityKeys: [],
      source: null,
      pii: r.pii,
    });
  }
  return out;
}

// ------------------------------------------------------------------ entities

export function entityCandidates(rows: EntityCandidateRow[], refs: Pair[]): Hydrated {
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
      namedEntities: [],
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
