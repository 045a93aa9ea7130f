import { expect } from 'vitest';
import type { Database } from '../../src/db/database.js';
import type { TestGateway } from './gateway.js';
import type { ScoreTerms } from './score-signals.js';

/** Seeds and reads for the context compiler tests — everything goes through the public mutations. */

export interface PackItem {
  kind: string;
  id: string;
  namespace: string | null;
  text: string;
  title: string | null;
  sourcePath: string | null;
  score: number;
  tokenEstimate: number;
  conflict: boolean;
  /** As the server reports them: the additive terms, the named entities, each channel's rank. */
  signals: ScoreTerms & {
    entities: string[];
    channels: { channel: string; rank: number; score: number | null }[];
  };
  provenance?: { steps: { kind: string; id: string | null; label: string; uri: string | null }[] };
}

export interface Pack {
  query: string;
  sections: { kind: string; items: PackItem[] }[];
  sources: { namespace: string; key: string; title: string; sourcePath: string | null }[];
  tokenEstimate: number;
  budget: {
    maxTokens: number;
    used: number;
    truncated: boolean;
    dropped: { id: string; reason: string; tokenEstimate: number }[];
  };
  conflicts: string[];
  warnings: string[];
  emptyReason: string | null;
  traceId: string;
  text: string;
}

const ITEM = `kind id namespace text title sourcePath score tokenEstimate conflict
  signals { rrf exactId entity entities scope current evidence freshness label terms asking newer state channels { channel rank score } }`;

export const CONTEXT_QUERY = /* GraphQL */ `
  query Context($input: ContextInput!) {
    context(input: $input) {
      query tokenEstimate conflicts warnings emptyReason traceId text
      sections { kind items { ${ITEM} } }
      sources { namespace key title sourcePath }
      budget { maxTokens used truncated dropped { id reason tokenEstimate } }
    }
  }
`;

export const CONTEXT_WITH_PROVENANCE = /* GraphQL */ `
  query ContextProvenance($input: ContextInput!) {
    context(input: $input) {
      traceId
      sections { kind items { ${ITEM} provenance { steps { kind id label uri } } } }
    }
  }
`;

export const TRACE_QUERY = /* GraphQL */ `
  query Trace($ns: String!, $id: String!) {
    contextTrace(namespace: $ns, traceId: $id) { traceId createdAt kind request channels decisions }
  }
`;

export interface TraceDecision {
  id: string;
  kind: string;
  namespace: string | null;
  localId: string | null;
  decision: 'INCLUDED' | 'EXCLUDED' | 'BLOCKED';
  reason: string | null;
  score: number | null;
  section: string | null;
  tokenEstimate: number | null;
  distance: number | null;
  conflict: boolean;
  expansion: string | null;
  duplicateOf: string | null;
}

export interface Trace {
  traceId: string;
  createdAt: string;
  kind: string;
  request: Record<string, unknown>;
  channels: Record<
    string,
    { candidates: number; weight: number; ms: number; status: string; error?: string }
  >;
  decisions: TraceDecision[];
}

async function mutate(gw: TestGateway, query: string, variables: Record<string, unknown>, field: string) {
  const res = await gw.gql<Record<string, { accepted: number; rejected: number; results: WriteResultRow[] }>>(
    query,
    variables,
  );
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  const payload = res.data![field]!;
  expect(payload.rejected, JSON.stringify(payload.results)).toBe(0);
  return payload.results;
}

interface WriteResultRow {
  index: number;
  status: string;
  id: string | null;
  key: string | null;
  code: string | null;
  message: string | null;
}

export async function retainDocuments(gw: TestGateway, ns: string, documents: Record<string, unknown>[]) {
  return mutate(
    gw,
    `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) {
       accepted rejected results { index status id key code message } } }`,
    { ns, d: documents },
    'retainDocuments',
  );
}

export async function recordObservations(
  gw: TestGateway,
  ns: string,
  observations: Record<string, unknown>[],
) {
  return mutate(
    gw,
    `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) {
       accepted rejected results { index status id key code message } } }`,
    { ns, o: observations },
    'recordObservations',
  );
}

export async function upsertEntities(gw: TestGateway, ns: string, entities: Record<string, unknown>[]) {
  return mutate(
    gw,
    `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) {
       accepted rejected results { index status id key code message } } }`,
    { ns, e: entities },
    'upsertEntities',
  );
}

/** Asserts facts; returns their fact ids in input order. */
export async function assertFacts(
  gw: TestGateway,
  ns: string,
  facts: Record<string, unknown>[],
): Promise<string[]> {
  const results = await mutate(
    gw,
    `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) {
       accepted rejected results { index status id key code message } } }`,
    { ns, f: facts },
    'assertFacts',
  );
  return results.map((r) => r.key!);
}

export async function supersedeFact(
  gw: TestGateway,
  ns: string,
  factId: string,
  by: Record<string, unknown>,
) {
  const results = await mutate(
    gw,
    `mutation($ns: String!, $id: String!, $by: FactInput!) { supersedeFact(namespace: $ns, factId: $id, by: $by) {
       accepted rejected results { index status id key code message } } }`,
    { ns, id: factId, by },
    'supersedeFact',
  );
  return results;
}

export async function redactObservation(gw: TestGateway, ns: string, observationId: string) {
  return mutate(
    gw,
    `mutation($ns: String!, $id: String!) { redactObservation(namespace: $ns, observationId: $id, reason: "test") {
       accepted rejected results { index status id key code message } } }`,
    { ns, id: observationId },
    'redactObservation',
  );
}

/** Compiles a pack; fails the test on GraphQL errors. */
export async function compile(
  gw: TestGateway,
  input: Record<string, unknown>,
  token?: string,
): Promise<Pack> {
  const res = await gw.gql<{ context: Pack }>(CONTEXT_QUERY, { input }, { token });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data!.context;
}

export async function readTrace(
  gw: TestGateway,
  ns: string,
  traceId: string,
  token?: string,
): Promise<Trace | null> {
  const res = await gw.gql<{ contextTrace: Trace | null }>(TRACE_QUERY, { ns, id: traceId }, { token });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data!.contextTrace;
}

export function allItems(pack: Pick<Pack, 'sections'>): PackItem[] {
  return pack.sections.flatMap((s) => s.items);
}

export function section(pack: Pick<Pack, 'sections'>, kind: string): PackItem[] {
  return pack.sections.find((s) => s.kind === kind)?.items ?? [];
}

/**
 * Facts served as holding (at asOf): those of the leading CURRENT_STATE section (its history
 * lines aside), then RELEVANT_FACTS.
 */
export function servedFacts(pack: Pick<Pack, 'sections'>): PackItem[] {
  const state = section(pack, 'CURRENT_STATE').filter(
    (i) => i.kind === 'fact' && !i.text.startsWith('[history'),
  );
  return [...state, ...section(pack, 'RELEVANT_FACTS')];
}

/** Every table of the public schema whose rows, as text, contain `marker` (case-sensitive). */
export async function tablesContaining(db: Database, marker: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const hits: string[] = [];
  for (const { name } of rows) {
    const found = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${name.replace(/"/g, '""')}" t WHERE strpos(t::text, $1) > 0`,
      [marker],
    );
    if ((found.rows[0]?.n ?? 0) > 0) hits.push(name);
  }
  return hits;
}
