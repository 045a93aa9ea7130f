/**
 * Stage 3, hydrate: candidates read back with the columns scoring and packing need (see
 * hydrate.ts), every kind in one statement. The pool remembers every candidate read and
 * every one a hard filter blocked, whichever stage asked for it.
 */
import type { Queryable } from '../../../db/database.js';
import type { CandidatePairs, CandidateRows } from '../store/candidate-store.js';
import type { BlockedCandidate, Candidate, CandidateRef } from './candidates.js';
import { candidateKey } from './candidates.js';
import { type HydrateContext, type Hydrated, candidatesOfRows, hydrateCandidates } from './hydrate.js';

export class CandidatePool {
  readonly hydrated = new Map<string, Candidate>();
  readonly blocked = new Map<string, BlockedCandidate>();
  /** Every key asked for, read or not (absent, hidden, blocked): none is asked for twice. */
  private readonly asked = new Set<string>();

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

  /** Reads the refs not read yet: every kind in one statement. */
  async hydrate(refs: readonly Pick<CandidateRef, 'kind' | 'namespace' | 'id'>[]): Promise<void> {
    const pairs = this.unread(refs);
    this.keep(await hydrateCandidates(this.db, pairs, this.context));
  }

  /**
   * Takes rows another statement read (with this pool's context) for `refs`; as `hydrate`,
   * keeps only those of refs not read yet.
   */
  ingest(refs: readonly Pick<CandidateRef, 'kind' | 'namespace' | 'id'>[], rows: CandidateRows): void {
    this.keep(candidatesOfRows(rows, this.unread(refs)));
  }

  /** The refs not asked for yet, by kind, each once; they count as asked for from now on. */
  private unread(refs: readonly Pick<CandidateRef, 'kind' | 'namespace' | 'id'>[]): CandidatePairs {
    const pairs: CandidatePairs = { chunk: [], fact: [], observation: [], entity: [] };
    for (const r of refs) {
      const key = candidateKey(r);
      if (this.hydrated.has(key) || this.asked.has(key)) continue;
      this.asked.add(key);
      pairs[r.kind].push({ namespace: r.namespace, id: r.id });
    }
    return pairs;
  }

  private keep(h: Hydrated): void {
    for (const c of h.candidates) this.hydrated.set(c.key, c);
    for (const b of h.blocked) this.blocked.set(b.key, b);
  }

  /** Scopes of a candidate or blocked candidate (a trace's visibility derives from them). */
  scopesOf(key: string): readonly string[] {
    return this.hydrated.get(key)?.scopes ?? this.blocked.get(key)?.scopes ?? [];
  }
}
