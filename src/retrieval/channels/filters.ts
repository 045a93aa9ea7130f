import { visibleTo } from '../../store/visibility.js';

/**
 * What every chunk channel must respect: the requested namespaces only, the caller's
 * visibility, and the request's filters. These are real WHERE predicates, so a row outside
 * them is never even a candidate.
 */
export interface ChunkFilter {
  namespaces: string[];
  /** The principal's visibility scopes; null = unrestricted. */
  visibleScopes: string[] | null;
  /** Containment: a chunk matches when its meta contains every given pair. */
  meta: Record<string, unknown> | null;
  kinds: string[] | null;
  /** A chunk matches when it carries at least one of these scopes. */
  scopes: string[] | null;
  /** Half-open window [since, until) on occurred_at, or created_at when it has none. */
  since: Date | null;
  until: Date | null;
}

export const NO_FILTERS: Omit<ChunkFilter, 'namespaces' | 'visibleScopes'> = {
  meta: null,
  kinds: null,
  scopes: null,
  since: null,
  until: null,
};

/** Number of parameters {@link chunkFilterSql} binds. */
export const CHUNK_FILTER_PARAMS = 7;

/**
 * The predicate over chunk alias `c`, with its parameters at `$first … $first+6` (the order of
 * {@link chunkFilterParams}). Absent filters are NULL parameters, so each channel is one fixed
 * statement whatever the request holds.
 */
export function chunkFilterSql(alias: string, first: number): string {
  const p = (i: number) => `$${first + i}`;
  const a = alias;
  return `${a}.namespace = ANY(${p(0)}::text[])
    AND ${visibleTo(a, p(1))}
    AND (${p(2)}::jsonb IS NULL OR ${a}.meta @> ${p(2)}::jsonb)
    AND (${p(3)}::text[] IS NULL OR ${a}.kind = ANY(${p(3)}::text[]))
    AND (${p(4)}::text[] IS NULL OR ${a}.scopes && ${p(4)}::text[])
    AND (${p(5)}::timestamptz IS NULL OR coalesce(${a}.occurred_at, ${a}.created_at) >= ${p(5)}::timestamptz)
    AND (${p(6)}::timestamptz IS NULL OR coalesce(${a}.occurred_at, ${a}.created_at) < ${p(6)}::timestamptz)`;
}

export function chunkFilterParams(f: ChunkFilter): unknown[] {
  return [f.namespaces, f.visibleScopes, f.meta, f.kinds, f.scopes, f.since, f.until];
}

/** A channel's candidate: a chunk and the channel's own raw score (null when it has none). */
export interface ChunkCandidate {
  namespace: string;
  chunkId: number;
  /** The entity owning the chunk: lets the graph walk start before the rows are loaded. */
  nodeKey: string;
  score: number | null;
  /**
   * The chunk is an observation's own text (its node is the observation, no entity): set by
   * the query channels, so that the compiler can seed the graph without reading the chunk.
   */
  observationText?: boolean;
}

/** The id fusion works on: chunk ids are unique per namespace only. */
export function candidateId(c: { namespace: string; chunkId: number }): string {
  return `${c.namespace}\u0000${c.chunkId}`;
}

export function parseCandidateId(id: string): { namespace: string; chunkId: number } {
  const i = id.lastIndexOf('\u0000');
  return { namespace: id.slice(0, i), chunkId: Number(id.slice(i + 1)) };
}

/** Rows from either backend: bigint and numeric may come back as strings. */
export function toCandidates(
  rows: { namespace: string; chunkId: unknown; nodeKey: string; score: unknown; observationText?: unknown }[],
): ChunkCandidate[] {
  return rows.map((r) => ({
    namespace: r.namespace,
    chunkId: Number(r.chunkId),
    nodeKey: r.nodeKey,
    score: r.score == null ? null : Number(r.score),
    ...(r.observationText === undefined ? {} : { observationText: r.observationText === true }),
  }));
}
