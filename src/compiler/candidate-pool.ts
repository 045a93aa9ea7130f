/**
 * Stage 3, hydrate: candidates read back with the columns scoring and packing need (see
 * hydrate.ts), one statement per kind present. The pool remembers every candidate read and
 * every one a hard filter blocked, whichever stage asked for it.
 */
import type { Queryable } from '../db/database.js';
import type { BlockedCandidate, Candidate, CandidateKind, CandidateRef } from './candidates.js';
import { candidateKey } from './candidates.js';
import {
  type HydrateContext,
  type Hydrated,
  hydrateChunks,
  hydrateEntities,
  hydrateFacts,
  hydrateObservations,
} from './hydrate.js';

const HYDRATORS: Readonly<
  Record<
    CandidateKind,
    (q: Queryable, refs: { namespace: string; id: string }[], ctx: HydrateContext) => Promise<Hydrated>
  >
> = {
  chunk: hydrateChunks,
  fact: hydrateFacts,
  observation: hydrateObservations,
  entity: hydrateEntities,
};

export class CandidatePool {
  readonly hydrated = new Map<string, Candidate>();
  readonly blocked = new Map<string, BlockedCandidate>();

  constructor(
    private readonly db: Queryable,
    readonly context: HydrateContext,
  ) {}

  get(key: string): Candidate | undefined {
    return this.hydrated.get(key);
  }

  has(key: string): boolean {
    return this.hydrated.has(key);
  }

  /** Reads the refs not read yet: one statement per kind, concurrently. */
  async hydrate(refs: readonly Pick<CandidateRef, 'kind' | 'namespace' | 'id'>[]): Promise<void> {
    const byKind = new Map<CandidateKind, { namespace: string; id: string }[]>();
    const seen = new Set<string>();
    for (const r of refs) {
      const key = candidateKey(r);
      if (this.hydrated.has(key) || seen.has(key)) continue;
      seen.add(key);
      byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), { namespace: r.namespace, id: r.id }]);
    }
    // A fixed kind order keeps the blocked list (and so the trace) deterministic.
    const kinds = (Object.keys(HYDRATORS) as CandidateKind[]).filter((k) => byKind.has(k));
    const results = await Promise.all(
      kinds.map((kind) => HYDRATORS[kind](this.db, byKind.get(kind)!, this.context)),
    );
    for (const h of results) {
      for (const c of h.candidates) this.hydrated.set(c.key, c);
      for (const b of h.blocked) this.blocked.set(b.key, b);
    }
  }

  /** Scopes of a candidate or blocked candidate (a trace's visibility derives from them). */
  scopesOf(key: string): readonly string[] {
    return this.hydrated.get(key)?.scopes ?? this.blocked.get(key)?.scopes ?? [];
  }
}
