import { describe, expect, it } from 'vitest';
import {
  passesFloor,
  requestedEntityKeys,
  topHitSeeds,
} from '../../src/modules/retrieval/compiler/anchored-channels.js';
import { CandidatePool } from '../../src/modules/retrieval/compiler/candidate-pool.js';
import {
  type Candidate,
  candidateGlobalId,
  candidateKey,
} from '../../src/modules/retrieval/compiler/candidates.js';
import { conflictGroups } from '../../src/modules/retrieval/compiler/conflicts.js';
import { expansionNames } from '../../src/modules/retrieval/compiler/expand.js';
import { PackBuilder } from '../../src/modules/retrieval/compiler/pack-builder.js';
import type { CompileRequest, ContextPackValue } from '../../src/modules/retrieval/compiler/pack-types.js';
import { MULTI_HOP_WEIGHT, planCompilation } from '../../src/modules/retrieval/compiler/plan.js';
import {
  CANDIDATE_LIMIT,
  scoreUnion,
  selectUnion,
  signalContext,
} from '../../src/modules/retrieval/compiler/score.js';
import type { ScoreSignals, Scored } from '../../src/modules/retrieval/compiler/signals.js';
import {
  type TraceDecision,
  type TraceDraft,
  currentDecision,
  decisionsAsServed,
  storedDecision,
  traceRows,
  withReplacements,
} from '../../src/modules/retrieval/compiler/trace.js';
import type { Queryable } from '../../src/db/database.js';

// Each stage of the context compiler on its own, with typed inputs and outputs (no database:
// the stages that read go through the pool, which these tests fill directly).

const NOW = new Date('2024-06-01T00:00:00Z');
const noDatabase: Queryable = {
  query: () => Promise.reject(new Error('these stages must not read')),
};

function request(overrides: Partial<CompileRequest> = {}): CompileRequest {
  return {
    namespaces: ['ns'],
    query: 'deploy failed on step 3',
    scopes: [],
    anchors: [],
    subject: null,
    ephemeralContext: null,
    budgetTokens: 2000,
    strategy: 'HYBRID',
    asOf: null,
    k: 8,
    maxDistance: null,
    ...overrides,
  };
}

function candidate(id: string, overrides: Partial<Candidate> = {}): Candidate {
  const kind = overrides.kind ?? 'chunk';
  return {
    key: candidateKey({ kind, namespace: 'ns', id }),
    kind,
    namespace: 'ns',
    localId: id,
    globalId: `G-${id}`,
    section: kind === 'fact' ? 'RELEVANT_FACTS' : 'DOCUMENTS',
    title: null,
    text: `text of ${id}`,
    sourcePath: null,
    scopes: [],
    time: null,
    evidenceRank: 0,
    currentFact: false,
    conflict: false,
    conflictsWith: [],
    distance: null,
    identifiers: [],
    namedEntities: [],
    entityKeys: [],
    source: null,
    pii: false,
    ...overrides,
  };
}

const scoredOf = (c: Candidate, score: number): Scored => ({
  candidate: c,
  score,
  signals: {
    rrf: score,
    channels: [],
    exactId: 0,
    entity: 0,
    entities: [],
    scope: 0,
    current: 0,
    evidence: 0,
    freshness: 0,
    label: 0,
    terms: 0,
    asking: 0,
    newer: 0,
    state: 0,
  },
});

function poolWith(candidates: Candidate[], queryVector: string | null = null): CandidatePool {
  const pool = new CandidatePool(noDatabase, {
    asOf: NOW,
    heldAt: null,
    queryVector,
    visibleScopes: null,
    scopes: null,
  });
  for (const c of candidates) pool.hydrated.set(c.key, c);
  return pool;
}

const plan = (overrides: Partial<CompileRequest> = {}) =>
  planCompilation(request(overrides), { embedderModel: 'hashing:64', visibleScopes: null, now: NOW });

describe('plan', () => {
  it('lists the strategy channels, applies weight overrides and adds the multi-hop weight', () => {
    const p = plan({ weights: { lexical: 0.25 } });
    expect(p.channels).toEqual(['vector', 'lexical', 'exact', 'facts', 'graph', 'recent']);
    expect(p.weights.lexical).toBe(0.25);
    expect(p.weights.multi_hop).toBe(MULTI_HOP_WEIGHT);
    expect(p.asOf).toEqual(NOW);
    expect(p.perChannel).toBe(20);
  });

  it('keeps only the query channels inside a time window, and none without a query', () => {
    const windowed = plan({ window: { since: new Date('2024-01-01'), until: null } });
    expect(windowed.channels).toEqual(['vector', 'lexical', 'exact']);
    expect(windowed.filter.since).toEqual(new Date('2024-01-01'));
    expect(plan({ query: '  ' }).channels).toEqual(['facts', 'graph', 'recent']);
    expect(plan({ strategy: 'BRIEFING' }).query).toBe('');
  });
});

describe('anchored channels: seeds', () => {
  it('names anchors and both forms of the subject once', () => {
    expect(
      requestedEntityKeys({ anchors: ['a', 'person:bob'], subject: { type: 'person', id: 'bob' } }),
    ).toEqual(['a', 'person:bob', 'bob']);
  });

  it('seeds with the first entity of the best hits, skipping hits below the floor', () => {
    const near = candidate('1', { entityKeys: ['doc:near'], distance: 0.2 });
    const far = candidate('2', { entityKeys: ['doc:far'], distance: 0.9 });
    const lists = new Map([
      [
        'lexical',
        [
          { id: far.key, score: 2 },
          { id: near.key, score: 1 },
        ],
      ],
    ]);
    const pool = poolWith([near, far], '[1]');
    expect(topHitSeeds(lists, plan(), pool, 0.5, 4)).toEqual([{ namespace: 'ns', key: 'doc:near' }]);
    expect(topHitSeeds(lists, plan(), pool, null, 1)).toEqual([{ namespace: 'ns', key: 'doc:far' }]);
    expect(passesFloor(far, 0.5, false)).toBe(true);
  });
});

describe('score', () => {
  it('selects the fused union by reference and scores only what was read', () => {
    const a = candidate('a');
    const lists = new Map([
      [
        'lexical',
        [
          { id: a.key, score: 1 },
          { id: candidateKey({ kind: 'chunk', namespace: 'ns', id: 'gone' }), score: 0.5 },
        ],
      ],
    ]);
    const p = plan();
    const selection = selectUnion(lists, p);
    expect(selection.considered).toHaveLength(2);
    expect(selection.overLimit).toBe(0);
    const scored = scoreUnion(lists, selection, poolWith([a]), p, signalContext(p, []));
    expect(scored.map((s) => s.candidate.key)).toEqual([a.key]);
    expect(scored[0]!.signals.channels).toEqual([{ channel: 'lexical', rank: 0, score: 1 }]);
  });

  it('counts candidates beyond the limit instead of reading them', () => {
    const many = Array.from({ length: CANDIDATE_LIMIT + 5 }, (_, i) => ({
      id: candidateKey({ kind: 'chunk', namespace: 'ns', id: String(i) }),
      score: null,
    }));
    expect(selectUnion(new Map([['lexical', many]]), plan()).overLimit).toBe(5);
  });
});

describe('pack', () => {
  const identity = (t: string) => t;

  it('excludes below the floor but serves every version of a conflict when one passes', () => {
    const f1 = candidate('f1', { kind: 'fact', conflict: true, conflictsWith: ['f2'], distance: 0.1 });
    const f2 = candidate('f2', { kind: 'fact', conflict: true, conflictsWith: ['f1'], distance: 0.9 });
    const far = candidate('c', { distance: 0.95 });
    const scored = [scoredOf(f1, 3), scoredOf(f2, 2), scoredOf(far, 1)];
    expect([...conflictGroups(scored, new Map(scored.map((s) => [s.candidate.key, s]))).keys()]).toEqual([
      f1.key,
      f2.key,
    ]);
    const builder = new PackBuilder(2000, 3, identity);
    const passing = builder.applyFloor(scored, 0.5);
    expect(passing.map((s) => s.candidate.localId)).toEqual(['f1', 'f2']);
    expect(builder.decisions.get(far.key)).toMatchObject({
      decision: 'EXCLUDED',
      reason: 'BELOW_RELEVANCE_FLOOR',
    });
    builder.offer(passing, false);
    expect([...builder.items.keys()]).toEqual([f1.key, f2.key]);
    expect(builder.floorExcluded).toBe(1);
  });

  it('expands only when the pack has memory items, room, and nothing dropped for the budget', () => {
    const builder = new PackBuilder(2000, 3, identity);
    expect(expansionNames(builder, 'q')).toEqual([]);
    const c = candidate('1', { text: 'Alice Martin met Bob Stone in Lisbon.' });
    builder.offer([scoredOf(c, 1)], false);
    expect(expansionNames(builder, 'who did Alice meet').length).toBeGreaterThan(0);
  });
});

describe('trace', () => {
  const draft: TraceDraft = {
    traceId: 'ctx-1',
    principalId: 'p',
    namespaces: ['ns'],
    request: { query: 'q' },
    channels: {},
    current: null,
    decisions: [
      {
        scopes: ['workspace:a', 'project:x'],
        decision: {
          id: 'G-1',
          kind: 'chunk',
          namespace: 'ns',
          localId: '1',
          decision: 'INCLUDED',
          reason: null,
          score: 1,
          signals: null,
          section: 'EPISODES',
          tokenEstimate: 10,
          distance: null,
          conflict: false,
          expansion: null,
          duplicateOf: null,
        },
      },
    ],
    candidatesOverLimit: 0,
  };
  const served: ContextPackValue = {
    query: 'q',
    sections: [],
    sources: [],
    tokenEstimate: 0,
    budget: { maxTokens: 100, used: 0, truncated: false, dropped: [] },
    conflicts: [],
    warnings: ['w'],
    emptyReason: null,
    traceId: 'ctx-1',
    text: '',
  };

  it('summarises the served pack and derives visibility from the items named', () => {
    const [row] = traceRows(draft, served);
    expect(row!.request.result).toMatchObject({ items: 0, warnings: ['w'] });
    expect(row!.visibility).toEqual(['workspace:a']);
  });

  it('records a replaced item as excluded and its stand-in as included', () => {
    const replaced = withReplacements(draft, [
      {
        itemId: 'G-1',
        reason: 'SESSION_COMPACTED',
        by: {
          kind: 'session',
          id: 'S-1',
          namespace: 'ns',
          text: 'Session s',
          title: 'Session s',
          sourcePath: null,
          score: 1,
          signals: {
            rrf: 1,
            channels: [],
            exactId: 0,
            entity: 0,
            entities: [],
            scope: 0,
            current: 0,
            evidence: 0,
            freshness: 0,
            label: 0,
            terms: 0,
            asking: 0,
            newer: 0,
            state: 0,
          },
          tokenEstimate: 8,
          conflict: false,
        },
      },
    ]);
    expect(replaced.decisions.map((d) => [d.decision.id, d.decision.decision, d.decision.reason])).toEqual([
      ['G-1', 'EXCLUDED', 'SESSION_COMPACTED'],
      ['S-1', 'INCLUDED', null],
    ]);
    expect(replaced.decisions[1]!.decision).toMatchObject({
      kind: 'session',
      section: 'EPISODES',
      tokenEstimate: 8,
    });
  });

  it('stores decisions compactly and reads each back whole', () => {
    const signals: ScoreSignals = {
      rrf: 0.0158,
      channels: [
        { channel: 'facts', rank: 2, score: null },
        { channel: 'vector', rank: 0, score: 0.81 },
      ],
      exactId: 0,
      entity: 0.01,
      entities: ['person:alice'],
      scope: 0,
      current: 0.003,
      evidence: 0,
      freshness: 1e-14,
      label: 0,
      terms: 0,
      asking: -0.002,
      newer: 0,
      state: 0,
    };
    const zero: ScoreSignals = {
      rrf: 0,
      channels: [],
      exactId: 0,
      entity: 0,
      entities: [],
      scope: 0,
      current: 0,
      evidence: 0,
      freshness: 0,
      label: 0,
      terms: 0,
      asking: 0,
      newer: 0,
      state: 0,
    };
    const base: TraceDecision = {
      id: candidateGlobalId('fact', 'ns', 'f-1'),
      kind: 'fact',
      namespace: 'ns',
      localId: 'f-1',
      decision: 'INCLUDED',
      reason: null,
      score: 0.0248,
      signals,
      section: 'RELEVANT_FACTS',
      tokenEstimate: 32,
      distance: 0.97,
      conflict: false,
      expansion: null,
      duplicateOf: null,
    };
    const decisions: TraceDecision[] = [
      base,
      { ...base, signals: zero, conflict: true, expansion: 'MULTI_HOP_EXPANSION' },
      {
        ...base,
        id: candidateGlobalId('chunk', 'ns', '42'),
        kind: 'chunk',
        localId: '42',
        decision: 'EXCLUDED',
        reason: 'DUPLICATE',
        duplicateOf: candidateGlobalId('chunk', 'ns', '7'),
      },
      {
        ...base,
        decision: 'BLOCKED',
        reason: 'EVIDENCE_LOST',
        score: null,
        signals: null,
        section: null,
        tokenEstimate: null,
        distance: null,
      },
      { ...base, id: 'S-1', kind: 'session', localId: null },
      currentDecision({ included: true, truncated: true, text: 't', block: 'b', cost: 3, fullCost: 9 }),
    ];
    const stored = decisions.map((d) => storedDecision(d, 'ns'));
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(decisions).length * 0.7);
    expect(stored[0]).not.toHaveProperty('id');
    expect(decisionsAsServed(JSON.parse(JSON.stringify(stored)), 'ns')).toEqual(decisions);
    // Rows written before the compact form read back as they were.
    expect(decisionsAsServed(JSON.parse(JSON.stringify(decisions)), 'ns')).toEqual(decisions);
  });
});
