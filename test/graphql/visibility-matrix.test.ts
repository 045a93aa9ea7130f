import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalId } from '../../src/global-id.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { schema } from '../../src/schema/index.js';
import { type GqlResponse, type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { dumpScopedRows, dumpSize } from '../helpers/hidden-rows.js';
import { callTool, connectMcpHttp } from '../helpers/mcp.js';
import { writeTokensFile } from '../helpers/principals.js';
import { missingRootFields } from '../helpers/schema-fields.js';

/**
 * Principals × read paths. In namespace `acme`, everything scoped `workspace:w1` carries the
 * word "sapphire"; namespace `other` holds the same keys with the word "emerald". All three
 * principals may read both namespaces, so only the SQL predicates keep rows apart:
 *
 * - nothing of `other` ever appears in an answer about `acme` ("emerald");
 * - "sapphire" appears for the w1 principal (where the path reaches a w1 row: the positive
 *   control that keeps this test able to fail) and never for the others;
 * - the public rows appear for everyone (so "sees nothing" cannot pass by accident).
 *
 * Relay ids in answers are decoded before the check, so a hidden row cannot leak as an id.
 * Adding a read path is one entry in PATHS; a Query field with no entry (and no exemption)
 * fails the completeness test. The MCP tools take the same checks through the SDK client
 * (MCP_PATHS); a tool with no entry fails the same way.
 */

const W1 = 'sapphire';
const OTHER_NS = 'emerald';

interface Fixture {
  secretEntityId: string;
  hubId: string;
  secretFactId: string;
  secretObservationId: string;
  secretChunkId: string;
  w1TraceId: string;
}

interface ReadPath {
  /** The Query field it exercises (for the completeness check). */
  field: string;
  name: string;
  query: string;
  variables?: (fx: Fixture) => Record<string, unknown>;
  /** The w1 principal must see a w1 row here. */
  w1Sees: boolean;
  /** Text every principal must see (a public row), when the path lists public rows. */
  allSee?: string;
  /** Path-specific checks (counts, for instance, which markers cannot show). */
  check?: (data: unknown, who: (typeof PRINCIPALS)[number]) => void;
}

const ACME = '"acme"';

const PATHS: ReadPath[] = [
  {
    field: 'entity',
    name: 'entity',
    query: `{ entity(namespace: ${ACME}, key: "sapphire-ent") { key title attributes } }`,
    w1Sees: true,
  },
  {
    field: 'entities',
    name: 'entities',
    query: `{ entities(namespace: ${ACME}, first: 50) { totalCount edges { node { id key title } } } }`,
    w1Sees: true,
    allSee: 'public-ent',
  },
  {
    field: 'node',
    name: 'node',
    query: 'query($id: ID!) { node(id: $id) { id ... on Entity { key title } } }',
    variables: (fx) => ({ id: fx.secretEntityId }),
    w1Sees: true,
  },
  {
    field: 'nodes',
    name: 'nodes',
    query: 'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Entity { key title } } }',
    variables: (fx) => ({ ids: [fx.secretEntityId, fx.hubId] }),
    w1Sees: true,
    allSee: 'hub',
  },
  {
    field: 'fact',
    name: 'fact',
    query:
      'query($id: String!) { fact(namespace: "acme", factId: $id) { factId predicate subject { key } object { key title } } }',
    variables: (fx) => ({ id: fx.secretFactId }),
    w1Sees: true,
  },
  {
    field: 'observation',
    name: 'observation',
    query:
      'query($id: String!) { observation(namespace: "acme", observationId: $id) { observationId content data } }',
    variables: (fx) => ({ id: fx.secretObservationId }),
    w1Sees: true,
  },
  {
    field: 'observations',
    name: 'observations',
    query: `{ observations(namespace: ${ACME}, first: 50) { totalCount edges { node { id content data } } } }`,
    w1Sees: true,
    allSee: 'quokka public note',
  },
  {
    field: 'source',
    name: 'source',
    query: `{ source(namespace: ${ACME}, key: "doc:sapphire") { key title content } }`,
    w1Sees: true,
  },
  {
    field: 'source',
    name: 'source (public)',
    query: `{ source(namespace: ${ACME}, key: "doc:public") { key title content } }`,
    w1Sees: false,
    allSee: 'quokka public handbook',
  },
  {
    field: 'paths',
    name: 'paths',
    query: `{ paths(namespace: ${ACME}, from: "hub", to: "sapphire-ent") { entities { key title } facts { factId } } }`,
    w1Sees: true,
  },
  {
    field: 'provenance',
    name: 'provenance',
    query: 'query($id: ID!) { provenance(id: $id) { steps { kind id label uri metadata } } }',
    variables: (fx) => ({ id: fx.secretChunkId }),
    w1Sees: true,
  },
  {
    field: 'timeline',
    name: 'timeline',
    query: `{ timeline(namespace: ${ACME}, key: "hub") { edges { node { kind fact { factId object { key title } } observation { content } } } } }`,
    w1Sees: true,
    allSee: 'public-ent',
  },
  {
    field: 'search',
    name: 'search',
    query: `{ search(input: { namespaces: [${ACME}], query: "quokka handbook", k: 20, hops: 2 }) { context hits { chunk { id text node { key } } } neighbors { entity { key title } } sources { key title } } }`,
    w1Sees: true,
    allSee: 'quokka public handbook',
  },
  {
    field: 'search',
    name: 'search (lexical, exact word)',
    query: `{ search(input: { namespaces: [${ACME}], query: "sapphire", mode: LEXICAL, k: 20 }) { context hits { chunk { text } } } }`,
    w1Sees: true,
  },
  {
    field: 'recall',
    name: 'recall',
    query: `{ recall(input: { namespaces: [${ACME}], query: "quokka handbook", budget: HIGH }) { context hits { chunk { text } } sources { key } } }`,
    w1Sees: true,
    allSee: 'quokka public handbook',
  },
  {
    field: 'ask',
    name: 'ask',
    query: `{ ask(input: { namespaces: [${ACME}], question: "quokka handbook", k: 20 }) { answer citations { key title } search { context } } }`,
    w1Sees: true,
    allSee: 'quokka public handbook',
  },
  {
    field: 'context',
    name: 'context',
    query: `{ context(input: { namespaces: [${ACME}], query: "quokka handbook", anchors: ["hub"], k: 16 }) { text sections { kind items { id kind text title } } sources { key title } budget { dropped { id reason } } } }`,
    w1Sees: true,
    allSee: 'quokka public',
  },
  {
    field: 'context',
    name: 'context (briefing)',
    query: `{ context(input: { namespaces: [${ACME}], strategy: BRIEFING, anchors: ["hub"], k: 16 }) { text sections { items { id text } } } }`,
    w1Sees: true,
  },
  {
    field: 'contextTrace',
    name: 'contextTrace (of a w1 pack)',
    query:
      'query($t: String!) { contextTrace(namespace: "acme", traceId: $t) { traceId channels decisions request } }',
    variables: (fx) => ({ t: fx.w1TraceId }),
    w1Sees: true,
  },
  {
    field: 'typedContext',
    name: 'typedContext',
    query: `{ typedContext(input: { namespaces: [${ACME}], anchors: [{ kind: "person", value: "hub" }], traverse: [{ relation: "knows", direction: OUT }] }) { anchors sections facts { factId object { key } } sources { key } used } }`,
    w1Sees: true,
    allSee: 'public-ent',
  },
  {
    field: 'facets',
    name: 'facets (counts)',
    query: `{ facets(namespace: ${ACME}) { topics { key label count } entities { key label count } predicates { key label count } } }`,
    w1Sees: false,
    // Counts are a leak too: the w1 note and the w1 fact are counted for w1 only.
    check: (data, who) => {
      const facets = (data as { facets: Record<string, { key: string; count: number }[]> }).facets;
      const count = (list: string, key: string) => facets[list]!.find((f) => f.key === key)?.count ?? 0;
      expect(count('topics', 'note'), `facets topics as ${who}`).toBe(who === 'w1' ? 2 : 1);
      expect(count('predicates', 'knows'), `facets predicates as ${who}`).toBe(who === 'w1' ? 3 : 2);
      expect(count('predicates', 'LINKS_TO'), `facets links as ${who}`).toBe(who === 'w1' ? 1 : 0);
    },
  },
  {
    field: 'route',
    name: 'route (entity hints)',
    // The hint echoes the question; what it resolves to must respect visibility.
    query: `{ route(input: { namespaces: [${ACME}], query: "What is the code of \\"sapphire-ent\\"?" }) { resolvedEntities { key title namespace matchedBy } } }`,
    w1Sees: true,
  },
  {
    field: 'context',
    name: 'context (AUTO: routed relationship)',
    query: `{ context(input: { namespaces: [${ACME}], strategy: AUTO, query: "How do \\"hub\\" and \\"sapphire-ent\\" know each other?" }) {
        text sections { items { id text } } route { resolvedEntities { key title } paths { entities { key title } } } } }`,
    w1Sees: true,
  },
  // Nested reads: every relation of a visible node applies the predicate too.
  {
    field: 'entity',
    name: 'entity.facts',
    query: `{ entity(namespace: ${ACME}, key: "hub") { facts(first: 50) { totalCount edges { node { factId object { key title } } } } } }`,
    w1Sees: true,
    allSee: 'public-ent',
  },
  {
    field: 'entity',
    name: 'entity.neighbors',
    query: `{ entity(namespace: ${ACME}, key: "hub") { neighbors(hops: 2) { entity { key title } via { factId } } } }`,
    w1Sees: true,
    allSee: 'public-ent',
  },
  {
    field: 'entity',
    name: 'entity.summary',
    query: `{ entity(namespace: ${ACME}, key: "hub") { summary { text facts { factId object { key title } } observations { content } } } }`,
    w1Sees: true,
  },
  {
    field: 'entity',
    name: 'entity.observations + chunks',
    query: `{ entity(namespace: ${ACME}, key: "hub") { observations { edges { node { content } } } chunks { edges { node { text } } } } }`,
    w1Sees: false,
  },
  {
    field: 'fact',
    name: 'fact.observations',
    query: 'query($id: String!) { fact(namespace: "acme", factId: $id) { observations { content } } }',
    variables: (fx) => ({ id: fx.secretFactId }),
    w1Sees: true,
  },
];

const WRITE_PAYLOAD = 'accepted rejected results { index status id key code message }';

/** A write aimed at a w1 row by a writer without w1, and the item codes it must answer. */
interface WritePath {
  /** The Mutation field it exercises (for the completeness check). */
  field: string;
  name: string;
  query: string;
  variables?: (fx: Fixture) => Record<string, unknown>;
  /** Every rejected item's code, in order: NOT_FOUND where it addresses the row, KEY_UNAVAILABLE where it collides. */
  codes: string[];
}

const WRITE_PATHS: WritePath[] = [
  {
    field: 'upsertEntities',
    name: 'upsertEntities (a w1 key)',
    query: `mutation { upsertEntities(namespace: ${ACME}, entities: [{ key: "sapphire-ent", kind: "person", title: "taken over" }]) { ${WRITE_PAYLOAD} } }`,
    codes: ['KEY_UNAVAILABLE'],
  },
  {
    field: 'assertFacts',
    name: 'assertFacts (onto a w1 endpoint, contradicting and citing w1 rows)',
    query: `mutation($contradicts: JSON!, $obs: String!) { assertFacts(namespace: ${ACME}, facts: [
        { subject: "hub", predicate: "knows", object: "sapphire-ent" },
        { subject: "hub", predicate: "doubts", object: "public-ent", attributes: $contradicts },
        { subject: "hub", predicate: "cites", object: "public-ent", observationIds: [$obs] }]) { ${WRITE_PAYLOAD} } }`,
    variables: (fx) => ({ contradicts: { contradicts: fx.secretFactId }, obs: fx.secretObservationId }),
    codes: ['KEY_UNAVAILABLE', 'NOT_FOUND', 'NOT_FOUND'],
  },
  {
    field: 'supersedeFact',
    name: 'supersedeFact (a w1 fact)',
    query: `mutation($id: String!) { supersedeFact(namespace: ${ACME}, factId: $id, by: { subject: "hub", predicate: "knows", object: "public-ent" }) { ${WRITE_PAYLOAD} } }`,
    variables: (fx) => ({ id: fx.secretFactId }),
    codes: ['NOT_FOUND'],
  },
  {
    field: 'retractFact',
    name: 'retractFact (a w1 fact)',
    query: `mutation($id: String!) { retractFact(namespace: ${ACME}, factId: $id, reason: "gone") { ${WRITE_PAYLOAD} } }`,
    variables: (fx) => ({ id: fx.secretFactId }),
    codes: ['NOT_FOUND'],
  },
  {
    field: 'purgeEntity',
    name: 'purgeEntity (a w1 entity)',
    query: `mutation { purgeEntity(namespace: ${ACME}, key: "sapphire-ent", reason: "gdpr") { ${WRITE_PAYLOAD} } }`,
    codes: ['NOT_FOUND'],
  },
  {
    field: 'purgeEntity',
    name: 'purgeEntity (a public entity w1 rows depend on)',
    query: `mutation { purgeEntity(namespace: ${ACME}, key: "hub", reason: "gdpr") { ${WRITE_PAYLOAD} } }`,
    codes: ['KEY_UNAVAILABLE'],
  },
  {
    field: 'redactObservation',
    name: 'redactObservation (a w1 observation)',
    query: `mutation($id: String!) { redactObservation(namespace: ${ACME}, observationId: $id, reason: "pii") { ${WRITE_PAYLOAD} } }`,
    variables: (fx) => ({ id: fx.secretObservationId }),
    codes: ['NOT_FOUND'],
  },
  {
    field: 'recordObservations',
    name: "recordObservations (a w1 observation's source identity)",
    query: `mutation { recordObservations(namespace: ${ACME}, observations: [{ source: { system: "notes", externalId: "sec-1" },
        kind: "note", occurredAt: "2024-04-01T00:00:00Z", content: "someone else's" }]) { ${WRITE_PAYLOAD} } }`,
    codes: ['KEY_UNAVAILABLE'],
  },
  {
    field: 'importObservations',
    name: "importObservations (a w1 observation's source identity, the bulk path)",
    query: `mutation { importObservations(namespace: ${ACME}, observations: [{ source: { system: "notes", externalId: "sec-1" },
        kind: "note", occurredAt: "2024-04-01T00:00:00Z", content: "someone else's" }]) { ${WRITE_PAYLOAD} } }`,
    codes: ['KEY_UNAVAILABLE'],
  },
  {
    field: 'retainDocuments',
    name: 'retainDocuments (a w1 document)',
    query: `mutation { retainDocuments(namespace: ${ACME}, documents: [{ key: "doc:sapphire", title: "mine", content: "# Mine" }]) { ${WRITE_PAYLOAD} } }`,
    codes: ['KEY_UNAVAILABLE'],
  },
  {
    field: 'reconcileSnapshot',
    name: 'reconcileSnapshot (listing a w1 entity, relating to it)',
    query: `mutation { reconcileSnapshot(namespace: ${ACME}, snapshot: { scope: "intruder", snapshotId: "i1",
        observedAt: "2024-04-01T00:00:00Z", entities: [{ key: "sapphire-ent", kind: "person" }],
        relations: [{ subject: "public-ent", relation: "knows", object: "sapphire-ent" }] }) {
        entities { ${WRITE_PAYLOAD} } relations { ${WRITE_PAYLOAD} } closedRelations staleEntities } }`,
    codes: ['KEY_UNAVAILABLE', 'KEY_UNAVAILABLE'],
  },
];

/** Mutation fields that change no namespace rows under visibility scopes, and why. */
const WRITE_EXEMPT: Record<string, string> = {
  configureNamespace: 'namespace configuration (packs, strict mode), no knowledge rows',
  setTextSearch:
    'namespace language, admins only; re-indexes every chunk and returns no rows (text-search.test.ts)',
  registerDomainPack: 'the shared pack registry (admins), no knowledge rows',
  beginImport: 'prepares the vector index for a large load (bulk-import.test.ts), no knowledge rows',
  finishImport: 'builds the vector index after a load (bulk-import.test.ts), no knowledge rows',
  configureContextWindow:
    'namespace setting, admins only; re-derives search text whose neighbours obey visibility, returns no rows (contextual-index.test.ts)',
  setPredicateCardinality:
    'namespace setting (a predicate single- or multi-valued), audited; returns no rows',
  configureExtraction: 'namespace setting (rule and model extraction on or off); returns no rows',
  rebuildSummaries:
    'queues every entity of a namespace for a summary rebuild: admins or principals seeing every scope only; returns a count (entity-summaries.test.ts)',
};

/** Every item code of every write payload in an answer, in document order. */
function itemCodes(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(itemCodes);
  if (value === null || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  if (typeof record.status === 'string' && 'code' in record) return record.code ? [String(record.code)] : [];
  return Object.values(record).flatMap(itemCodes);
}

/** Query fields that read no namespace rows under visibility scopes, and why. */
const EXEMPT: Record<string, string> = {
  auditTrail: 'admin-only log of actions (test/graphql/audit.test.ts)',
  domainPacks: 'the shared pack registry: schemas, no knowledge rows',
  namespaceSettings: 'configuration of a namespace, no knowledge rows',
  textSearch: 'a namespace language; chunk counts only for unrestricted principals (text-search.test.ts)',
  extractionStatus:
    'queue counts over every observation of a namespace: admins or principals seeing every scope only (extraction-model.test.ts)',
  summaryStatus:
    'summary counts over every entity of a namespace: admins or principals seeing every scope only (entity-summaries.test.ts)',
};

const PRINCIPALS = ['w1', 'none', 'w2'] as const;

interface McpPath {
  tool: string;
  name: string;
  args: (fx: Fixture) => Record<string, unknown>;
  w1Sees: boolean;
  allSee?: string;
}

/** The MCP tools over the same rows: each tool is a path (MCP_TOOLS is the list to cover). */
const MCP_PATHS: McpPath[] = [
  {
    tool: 'get_context',
    name: 'get_context',
    args: () => ({ namespaces: ['acme'], query: 'quokka handbook', anchors: ['hub'], k: 16 }),
    w1Sees: true,
    allSee: 'quokka public',
  },
  {
    tool: 'search_memory',
    name: 'search_memory',
    args: () => ({ namespaces: ['acme'], query: 'quokka handbook', k: 20, hops: 2 }),
    w1Sees: true,
    allSee: 'quokka public handbook',
  },
  {
    tool: 'get_entity',
    name: 'get_entity (a w1 entity)',
    args: () => ({ namespace: 'acme', key: 'sapphire-ent' }),
    w1Sees: true,
  },
  {
    tool: 'get_entity',
    name: 'get_entity (facts of a public entity)',
    args: () => ({ namespace: 'acme', key: 'hub' }),
    w1Sees: true,
    allSee: 'public-ent',
  },
  {
    tool: 'trace_provenance',
    name: 'trace_provenance',
    args: (fx) => ({ id: fx.secretChunkId }),
    w1Sees: true,
  },
  {
    tool: 'explain_context',
    name: 'explain_context (of a w1 pack)',
    args: (fx) => ({ namespace: 'acme', traceId: fx.w1TraceId }),
    w1Sees: true,
  },
  {
    tool: 'supersede_fact',
    name: 'supersede_fact (of a w1 fact, by a writer without w1)',
    args: (fx) => ({
      namespace: 'acme',
      factId: fx.secretFactId,
      by: { subject: 'hub', predicate: 'knows', object: 'public-ent' },
    }),
    w1Sees: false,
  },
];

/** Tools that read no rows beyond what the caller sends, and why. */
const MCP_EXEMPT: Record<string, string> = {
  record_observations: 'a write: answers with the ids and statuses of the items sent, nothing stored',
  assert_facts: 'a write: answers with the ids and statuses of the items sent, nothing stored',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface LivePath {
  /** The Subscription field it exercises (for the completeness check). */
  field: string;
  name: string;
  /** Variables: `$ns`. Each delivered change must carry a `key` (the end marker is found by it). */
  query: string;
}

/**
 * Subscription fields × principals: while each principal listens, the writer changes w1 rows,
 * public rows and rows of namespace `other` of every kind; what arrives is checked like a read.
 */
const LIVE_PATHS: LivePath[] = [
  {
    field: 'memoryChanged',
    name: 'memoryChanged',
    query: `subscription($ns: String!) { memoryChanged(namespace: $ns) {
      namespace kind key entity { id key title attributes } fact { factId subject { key } object { key title } }
      observation { observationId content data } document { key title content } } }`,
  },
];

/** Subscription fields that deliver no namespace rows, and why. */
const LIVE_EXEMPT: Record<string, string> = {};

/** The answer as text, with every Relay id decoded next to it. */
function visibleText(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)]
    .map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'))
    .filter((s) => /^[A-Z][A-Za-z]*:/.test(s));
  return `${text}\n${decoded.join('\n')}`;
}

describe('visibility: principals × read paths', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  const fx = {} as Fixture;

  const write = async (query: string, variables: Record<string, unknown>) => {
    const res = await gw.gql<
      Record<
        string,
        {
          accepted: number;
          rejected: number;
          results: { id: string; key: string; status: string; message: string | null }[];
        }
      >
    >(query, variables, { token: tokens.writer });
    expect(res.errors).toBeUndefined();
    const payload = Object.values(res.data!)[0]!;
    expect(payload.rejected, JSON.stringify(payload.results)).toBe(0);
    return payload.results;
  };

  async function seed(ns: string, marker: string): Promise<void> {
    const secret = ns === 'acme' ? W1 : OTHER_NS;
    const restricted = ns === 'acme' ? ['workspace:w1'] : [];
    await write(
      'mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { accepted rejected results { id key status message } } }',
      {
        ns,
        e: [
          { key: 'hub', kind: 'person', title: `Hub ${marker}` },
          {
            key: 'public-ent',
            kind: 'person',
            title: `Public ${marker}`,
            attributes: { note: `public ${marker}` },
          },
          { key: 'relevance-ent', kind: 'person', title: `Relevance ${marker}`, scopes: ['project:x'] },
          {
            key: 'sapphire-ent',
            kind: 'person',
            title: `Secret ${secret} ${marker}`,
            attributes: { code: secret },
            scopes: [...restricted, 'project:x'],
          },
        ],
      },
    );
    const facts = await write(
      'mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { accepted rejected results { id key status message } } }',
      {
        ns,
        f: [
          { subject: 'hub', predicate: 'knows', object: 'public-ent' },
          { subject: 'hub', predicate: 'knows', object: 'sapphire-ent', scopes: restricted },
          { subject: 'public-ent', predicate: 'knows', object: 'relevance-ent' },
        ],
      },
    );
    const observations = await write(
      'mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { accepted rejected results { id key status message } } }',
      {
        ns,
        o: [
          {
            source: { system: 'notes', externalId: 'pub-1' },
            kind: 'note',
            occurredAt: '2024-03-01T00:00:00Z',
            content: `quokka public note ${marker}`,
          },
          {
            source: { system: 'notes', externalId: 'sec-1' },
            kind: 'note',
            occurredAt: '2024-03-02T00:00:00Z',
            content: `quokka ${secret} secret note ${marker}`,
            data: { word: secret },
            scopes: restricted,
          },
        ],
      },
    );
    await write(
      'mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { accepted rejected results { id key status message } } }',
      {
        ns,
        d: [
          {
            key: 'doc:public',
            title: `Public handbook ${marker}`,
            content: `# Handbook\n\nquokka public handbook ${marker}`,
          },
          {
            key: 'doc:sapphire',
            title: `Secret handbook ${secret}`,
            content: `# Handbook\n\nquokka ${secret} handbook ${marker}`,
            scopes: restricted,
            links: ['hub'],
          },
        ],
      },
    );
    if (ns === 'acme') {
      // The w1 fact's observation: evidence that only w1 may see.
      const evidence = await write(
        'mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { accepted rejected results { id key status message } } }',
        {
          ns,
          f: [
            {
              subject: 'hub',
              predicate: 'knows',
              object: 'sapphire-ent',
              scopes: restricted,
              observationIds: [observations[1]!.key],
            },
          ],
        },
      );
      fx.secretFactId = evidence[0]!.key ?? facts[1]!.key;
      fx.secretObservationId = observations[1]!.key;
    }
  }

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'writer', read: ['acme', 'other'], write: ['acme', 'other'], scopes: ['*'] },
      { id: 'w1', read: ['acme', 'other'], scopes: ['workspace:w1'] },
      { id: 'none', read: ['acme', 'other'] },
      { id: 'w2', read: ['acme', 'other'], scopes: ['workspace:w2'] },
      { id: 'intruder', read: ['acme'], write: ['acme'], scopes: ['workspace:w2'] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    // `other` first: acme's rows are then the newer ones everywhere recency matters.
    await seed('other', OTHER_NS);
    await seed('acme', 'quokka');

    const ids = await gw.gql<{
      secret: { id: string };
      hub: { id: string };
      doc: { chunks: { edges: { node: { id: string } }[] } };
    }>(
      `{ secret: entity(namespace: "acme", key: "sapphire-ent") { id }
         hub: entity(namespace: "acme", key: "hub") { id }
         doc: entity(namespace: "acme", key: "doc:sapphire") { chunks { edges { node { id } } } } }`,
      {},
      { token: tokens.w1 },
    );
    expect(ids.errors).toBeUndefined();
    fx.secretEntityId = ids.data!.secret.id;
    fx.hubId = ids.data!.hub.id;
    fx.secretChunkId = ids.data!.doc.chunks.edges[0]!.node.id;
    const pack =
      '{ context(input: { namespaces: ["acme"], query: "quokka handbook", anchors: ["hub"], k: 16 }) { traceId text } }';
    const res = await gw.gql<{ context: { traceId: string; text: string } }>(pack, {}, { token: tokens.w1 });
    expect(res.errors).toBeUndefined();
    fx.w1TraceId = res.data!.context.traceId;
    expect(res.data!.context.text).toContain(W1);
  });
  afterAll(async () => {
    for (const client of mcpClients.values()) await client.close();
    await gw?.close();
  });

  const mcpClients = new Map<string, Client>();
  const mcp = async (who: string): Promise<Client> => {
    let client = mcpClients.get(who);
    if (!client) {
      client = await connectMcpHttp(gw.url, tokens[who]);
      mcpClients.set(who, client);
    }
    return client;
  };

  it('covers every MCP tool (a new tool needs a row in MCP_PATHS or a reason in MCP_EXEMPT)', () => {
    const covered = new Set(MCP_PATHS.map((p) => p.tool));
    const missing = MCP_TOOLS.map((t) => t.name).filter((t) => !covered.has(t) && !(t in MCP_EXEMPT));
    expect(missing).toEqual([]);
  });

  for (const path of MCP_PATHS) {
    it(`MCP ${path.name}: w1 sees its rows, the others never do, and no other namespace appears`, async () => {
      // A write probe runs as a writer that lacks w1 (the hidden row must read as absent).
      const principals = path.tool === 'supersede_fact' ? (['intruder'] as const) : PRINCIPALS;
      for (const who of principals) {
        const answer = await callTool(await mcp(who), path.tool, path.args(fx));
        const label = `MCP ${path.name} as ${who}`;
        if (answer.isError) {
          expect((answer.data.error as { code: string }).code, `${label}: ${answer.text}`).toBe('NOT_FOUND');
        }
        // An error may echo the caller's own input (a NOT_FOUND naming the key asked for); that
        // it reads exactly like an absent row's is checked below.
        const text = answer.isError
          ? answer.text.replaceAll(W1, '')
          : `${visibleText(answer.data)}\n${answer.text}`;
        expect(text.includes(OTHER_NS), `${label} shows namespace other`).toBe(false);
        if (who === 'w1') {
          if (path.w1Sees) expect(text, `${label} should show the w1 rows`).toContain(W1);
        } else {
          expect(text.includes(W1), `${label} shows a w1 row`).toBe(false);
        }
        if (path.allSee) expect(text, `${label} should show the public rows`).toContain(path.allSee);
      }
    });
  }

  it('MCP: a hidden row reads exactly like an absent one', async () => {
    const probes: [string, string, (key: string) => Record<string, unknown>, string, string][] = [
      ['none', 'get_entity', (key) => ({ namespace: 'acme', key }), 'sapphire-ent', 'no-such-entity'],
      [
        'none',
        'explain_context',
        (traceId) => ({ namespace: 'acme', traceId }),
        fx.w1TraceId,
        'no-such-trace',
      ],
      [
        'none',
        'trace_provenance',
        (id) => ({ id }),
        fx.secretChunkId,
        globalId('Chunk', 'acme', 999_999_999),
      ],
      [
        'intruder',
        'supersede_fact',
        (factId) => ({ namespace: 'acme', factId, by: { subject: 'hub', predicate: 'knows', object: 'x' } }),
        fx.secretFactId,
        'fact-000000000000000000000000',
      ],
    ];
    for (const [who, tool, args, hidden, absent] of probes) {
      const ask = async (key: string) =>
        JSON.stringify(await callTool(await mcp(who), tool, args(key))).replaceAll(key, '<key>');
      expect(await ask(hidden), tool).toBe(await ask(absent));
    }
  });

  it('covers every read path of the schema (a new Query field needs a row here)', () => {
    const fields = Object.keys(schema.getQueryType()!.getFields());
    const covered = new Set(PATHS.map((p) => p.field));
    const missing = fields.filter((f) => !covered.has(f) && !(f in EXEMPT));
    expect(missing).toEqual([]);
  });

  for (const path of PATHS) {
    it(`${path.name}: w1 sees its rows, the others never do, and no other namespace appears`, async () => {
      expect(missingRootFields(path.query), 'root fields the schema lacks').toEqual([]);
      for (const who of PRINCIPALS) {
        const res: GqlResponse = await gw.gql(path.query, path.variables?.(fx) ?? {}, {
          token: tokens[who],
        });
        const label = `${path.name} as ${who}`;
        if (process.env.MATRIX_DEBUG) console.log(label, JSON.stringify(res));
        // A hidden row reads as absent (null / empty / NOT_FOUND), never as an error that names it.
        for (const error of res.errors ?? []) {
          expect(['NOT_FOUND'], `${label}: ${error.message}`).toContain(error.extensions?.code);
        }
        const text = visibleText(res.data);
        const errorsText = JSON.stringify(res.errors ?? []);
        expect(
          text.includes(OTHER_NS) || errorsText.includes(OTHER_NS),
          `${label} shows namespace other`,
        ).toBe(false);
        if (who === 'w1') {
          if (path.w1Sees) expect(text, `${label} should show the w1 rows`).toContain(W1);
        } else {
          // Errors may echo the caller's own input (a NOT_FOUND naming the key asked for);
          // that they read exactly like an absent row's is checked below.
          expect(text.includes(W1), `${label} shows a w1 row`).toBe(false);
        }
        if (path.allSee) expect(text, `${label} should show the public rows`).toContain(path.allSee);
        path.check?.(res.data, who);
      }
    });
  }

  it('a hidden row reads exactly like an absent one (same data, same error, same message)', async () => {
    const probes: [string, Record<string, unknown>, Record<string, unknown>][] = [
      [
        '{ entity(namespace: "acme", key: "KEY") { key } }',
        { KEY: 'sapphire-ent' },
        { KEY: 'no-such-entity' },
      ],
      [
        '{ paths(namespace: "acme", from: "hub", to: "KEY") { facts { factId } } }',
        { KEY: 'sapphire-ent' },
        { KEY: 'no-such-entity' },
      ],
      ['{ source(namespace: "acme", key: "KEY") { key } }', { KEY: 'doc:sapphire' }, { KEY: 'doc:none' }],
      [
        '{ fact(namespace: "acme", factId: "KEY") { factId } }',
        { KEY: fx.secretFactId },
        { KEY: 'fact-000000000000000000000000' },
      ],
      [
        '{ observation(namespace: "acme", observationId: "KEY") { observationId } }',
        { KEY: fx.secretObservationId },
        { KEY: 'obs-000000000000000000000000' },
      ],
      [
        '{ contextTrace(namespace: "acme", traceId: "KEY") { traceId } }',
        { KEY: fx.w1TraceId },
        { KEY: 'no-such-trace' },
      ],
    ];
    for (const [template, hidden, absent] of probes) {
      expect(missingRootFields(template), template).toEqual([]);
      const ask = async (values: Record<string, unknown>) => {
        const key = String(values.KEY);
        const res = await gw.gql(template.replace('KEY', key), {}, { token: tokens.none });
        return JSON.stringify({
          data: res.data ?? null,
          errors: res.errors ?? null,
          status: res.status,
        }).replaceAll(key, '<key>');
      };
      expect(await ask(hidden), template).toBe(await ask(absent));
    }
  });

  it('covers every write path of the schema (a new Mutation field needs a row here)', () => {
    const fields = Object.keys(schema.getMutationType()!.getFields());
    const covered = new Set(WRITE_PATHS.map((p) => p.field));
    const missing = fields.filter((f) => !covered.has(f) && !(f in WRITE_EXEMPT));
    expect(missing).toEqual([]);
  });

  // Writes come after every read: what an intruder may create must not disturb the read checks.
  for (const path of WRITE_PATHS) {
    it(`${path.name}: a writer without w1 changes no w1 row and learns nothing of it`, async () => {
      expect(missingRootFields(path.query), 'root fields the schema lacks').toEqual([]);
      const before = await dumpScopedRows(gw.db, 'acme', ['workspace:w1']);
      expect(dumpSize(before)).toBeGreaterThan(0);
      const res = await gw.gql(path.query, path.variables?.(fx) ?? {}, { token: tokens.intruder });
      const label = `${path.name} as intruder`;
      if (process.env.MATRIX_DEBUG) console.log(label, JSON.stringify(res));
      expect(res.errors, label).toBeUndefined();
      // The keys the caller sent may come back (a NOT_FOUND names what was asked for).
      const text = visibleText(res.data)
        .replaceAll('sapphire-ent', '<asked>')
        .replaceAll('doc:sapphire', '<asked>');
      expect(text.includes(W1), `${label} shows a w1 row`).toBe(false);
      expect(text.includes(OTHER_NS), `${label} shows namespace other`).toBe(false);
      expect(itemCodes(res.data), label).toEqual(path.codes);
      expect(await dumpScopedRows(gw.db, 'acme', ['workspace:w1']), `${label} changed a w1 row`).toEqual(
        before,
      );
    });
  }

  it('relevance scopes only rank: a project-scoped row is visible to everyone', async () => {
    for (const who of PRINCIPALS) {
      const res = await gw.gql(
        `{ entity(namespace: "acme", key: "relevance-ent") { key } }`,
        {},
        { token: tokens[who] },
      );
      expect(res.data, who).toEqual({ entity: { key: 'relevance-ent' } });
    }
  });

  it('covers every subscription of the schema (a new Subscription field needs a row here)', () => {
    const fields = Object.keys(schema.getSubscriptionType()?.getFields() ?? {});
    const covered = new Set(LIVE_PATHS.map((p) => p.field));
    expect(fields.filter((f) => !covered.has(f) && !(f in LIVE_EXEMPT))).toEqual([]);
  });

  for (const path of LIVE_PATHS) {
    it(`${path.name}: live changes reach w1 only for w1 rows, never another namespace`, async () => {
      type Result = { data?: { [field: string]: { key: string } } | null; errors?: unknown };
      const streams = PRINCIPALS.map(
        (who) =>
          createSseClient({
            url: gw.url,
            headers: { authorization: `Bearer ${tokens[who]}` },
            retryAttempts: 0,
          }).iterate({ query: path.query, variables: { ns: 'acme' } }) as AsyncIterableIterator<Result>,
      );
      const upsert = (ns: string, e: unknown[]) =>
        write(
          'mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { accepted rejected results { id key status message } } }',
          { ns, e },
        );
      // Each stream is listening once a ping written after it subscribed arrives.
      for (const [i, stream] of streams.entries()) {
        const first = stream.next();
        let tick = 0;
        while (!(await Promise.race([first.then(() => true), sleep(100).then(() => false)]))) {
          tick += 1;
          if (tick > 100) throw new Error('subscription never started');
          await upsert('acme', [{ key: `live-ping-${i}`, kind: 'probe', title: `ping ${tick}` }]);
        }
      }
      const live = `live-${path.name}`;
      await upsert('other', [{ key: `${live}-other`, kind: 'note', title: `${OTHER_NS} live` }]);
      await upsert('acme', [
        { key: `${live}-secret`, kind: 'note', title: `${W1} live`, scopes: ['workspace:w1'] },
        { key: `${live}-public`, kind: 'note', title: 'public live' },
      ]);
      await write(
        'mutation($f: [FactInput!]!) { assertFacts(namespace: "acme", facts: $f) { accepted rejected results { id key status message } } }',
        { f: [{ subject: 'public-ent', predicate: 'live_link', object: 'sapphire-ent' }] },
      );
      await write(
        'mutation($o: [ObservationInput!]!) { recordObservations(namespace: "acme", observations: $o) { accepted rejected results { id key status message } } }',
        {
          o: [
            {
              source: { system: 'notes', externalId: `${live}-obs` },
              kind: 'note',
              occurredAt: '2024-05-01T00:00:00Z',
              content: `${W1} live note`,
              scopes: ['workspace:w1'],
            },
          ],
        },
      );
      await write(
        'mutation($d: [DocumentInput!]!) { retainDocuments(namespace: "acme", documents: $d) { accepted rejected results { id key status message } } }',
        {
          d: [
            {
              key: `doc:${live}`,
              title: `${W1} live doc`,
              content: `# Live\n\n${W1} live`,
              scopes: ['workspace:w1'],
            },
          ],
        },
      );
      await upsert('acme', [{ key: `${live}-end`, kind: 'note', title: 'end' }]);

      for (const [i, who] of PRINCIPALS.entries()) {
        const seen: unknown[] = [];
        const stream = streams[i]!;
        while (true) {
          const { value, done } = await stream.next();
          expect(done, `${who}: stream ended early`).toBe(false);
          expect(value!.errors, who).toBeUndefined();
          const change = value!.data![path.field]!;
          if (change.key.startsWith('live-ping')) continue;
          seen.push(change);
          if (change.key === `${live}-end`) break;
        }
        await stream.return?.();
        const text = visibleText(seen);
        const label = `${path.name} as ${who}`;
        expect(text.includes(OTHER_NS), `${label} shows namespace other`).toBe(false);
        expect(text, `${label} should show the public rows`).toContain('public live');
        if (who === 'w1') expect(text, `${label} should show the w1 rows`).toContain(W1);
        else expect(text.includes(W1), `${label} shows a w1 row`).toBe(false);
      }
    });
  }
});
