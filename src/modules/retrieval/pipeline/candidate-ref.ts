/**
 * The one model of a retrieval hit before it is read: what it is (kind), where (namespace) and
 * which (id), with what the channel measured. Every read path keys its candidates the same way
 * (`candidateKey`), so a chunk found by `search` and by `context` is one candidate with one key.
 */
import type { ChunkCandidate } from './channels/filters.js';

export type CandidateKind = 'fact' | 'chunk' | 'observation' | 'entity';

/** A channel's hit. `id` is the fact id, chunk id, observation id or entity key. */
export interface CandidateRef {
  kind: CandidateKind;
  namespace: string;
  id: string;
  /** The channel's own raw score (cosine similarity, BM25…), when it has one. */
  score?: number | null;
  /** Cosine distance to the query, when the channel measured it. */
  distance?: number | null;
  /** Owner entity of a chunk, when the channel knows it (seeds graph and facts). */
  nodeKey?: string | null;
}

/** `kind|namespace|id`: one candidate whatever channel reached it. */
export function candidateKey(ref: Pick<CandidateRef, 'kind' | 'namespace' | 'id'>): string {
  return `${ref.kind}|${ref.namespace}|${ref.id}`;
}

export function parseCandidateKey(key: string): { kind: CandidateKind; namespace: string; id: string } {
  const first = key.indexOf('|');
  const second = key.indexOf('|', first + 1);
  return {
    kind: key.slice(0, first) as CandidateKind,
    namespace: key.slice(first + 1, second),
    id: key.slice(second + 1),
  };
}

/** The key of a chunk (a chunk channel's hit, a loaded row). */
export function chunkKey(c: { namespace: string; chunkId: number }): string {
  return candidateKey({ kind: 'chunk', namespace: c.namespace, id: String(c.chunkId) });
}

/** A chunk key back to the chunk it names. */
export function parseChunkKey(key: string): { namespace: string; chunkId: number } {
  const { namespace, id } = parseCandidateKey(key);
  return { namespace, chunkId: Number(id) };
}

/**
 * A chunk channel's hit as a candidate reference; `nodeKey` is the entity the hit is about
 * (none for an observation's own text), so the graph can be seeded without reading the chunk.
 */
export function chunkRef(h: ChunkCandidate): CandidateRef {
  return {
    kind: 'chunk',
    namespace: h.namespace,
    id: String(h.chunkId),
    score: h.score,
    nodeKey: h.observationText ? null : h.nodeKey,
  };
}
