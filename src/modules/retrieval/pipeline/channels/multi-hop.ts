/**
 * The multi-hop channel: for each entity name (rule-detected in packed items), the chunks its
 * lexical ranking finds and the facts around entities so named — at most `perName` of each per
 * name, facts unique across names. One statement (store/multi-hop-store.ts), which also reads
 * the hits back as candidates.
 */
import type { Queryable } from '../../../../db/database.js';
import type { CandidateReadContext, CandidateRows } from '../../store/candidate-store.js';
import { multiHopCandidates } from '../../store/multi-hop-store.js';
import type { ChunkFilter } from './filters.js';

export interface MultiHopChannelInput {
  filter: ChunkFilter;
  names: string[];
  perName: number;
  lexical: { k1: number; b: number; maxTerms: number };
  asOf: Date;
  scopes: string[] | null;
}

export interface MultiHopHit {
  kind: 'chunk' | 'fact';
  namespace: string;
  /** Chunk id or fact id. */
  id: string;
  /** BM25 score of a chunk; null for facts. */
  score: number | null;
}

export interface MultiHopOutput {
  /** Chunks name by name (in `names` order), then the facts. */
  hits: MultiHopHit[];
  /** The hits' candidate rows, read by the same statement. */
  candidates: CandidateRows;
}

export async function multiHopChannel(
  q: Queryable,
  input: MultiHopChannelInput,
  visibleScopes: string[] | null,
  read: CandidateReadContext,
): Promise<MultiHopOutput> {
  const { rows, candidates } = await multiHopCandidates(q, input, visibleScopes, read);
  const chunks = rows.filter((r) => r.kind === 'chunk');
  const seen = new Set<string>();
  const perName = new Map<number, number>();
  const facts: MultiHopHit[] = [];
  for (const r of rows.filter((x) => x.kind === 'fact').sort((a, b) => a.pos - b.pos)) {
    const k = `${r.namespace}\u0000${r.id}`;
    if (seen.has(k)) continue;
    seen.add(k);
    const n = perName.get(r.nameIndex) ?? 0;
    if (n >= input.perName) continue;
    perName.set(r.nameIndex, n + 1);
    facts.push({ kind: 'fact', namespace: r.namespace, id: r.id, score: null });
  }
  const hits = [
    ...chunks
      .sort((a, b) => a.nameIndex - b.nameIndex || a.pos - b.pos)
      .map((r): MultiHopHit => ({ kind: 'chunk', namespace: r.namespace, id: r.id, score: r.score })),
    ...facts,
  ];
  return { hits, candidates };
}
