import { factId } from '../../src/domain/ids.js';
import { SERVICES_PACK } from '../graphql/domain-pack-fixture.js';
import type { TestGateway } from './gateway.js';

/**
 * Seeds every kind of object through the API, for tests that copy a database and compare:
 * a domain pack and namespace settings, entities with attribute versions, scopes and PII,
 * observations (one redacted), facts (active, superseded, retracted, evidence-lost,
 * conflicting), documents with provenance and links, a context trace, and audit records.
 */
export const SEED_NAMESPACES = ['acme', 'beta'] as const;

const PAYLOAD = 'accepted rejected results { index status key code message }';

interface Payload {
  accepted: number;
  rejected: number;
  results: {
    index: number;
    status: string;
    key: string | null;
    code: string | null;
    message: string | null;
  }[];
}

async function write(gw: TestGateway, query: string, variables: Record<string, unknown>, field: string) {
  const res = await gw.gql<Record<string, Payload>>(query, variables);
  if (res.errors?.length) throw new Error(`${field}: ${JSON.stringify(res.errors)}`);
  const payload = res.data![field]!;
  if (payload.rejected > 0) throw new Error(`${field}: ${JSON.stringify(payload.results)}`);
  return payload;
}

export interface SeededIds {
  redactedObservation: string;
  keptObservation: string;
  supersededFact: string;
  retractedFact: string;
  evidenceLostFact: string;
}

export async function seedMemory(gw: TestGateway): Promise<SeededIds> {
  const pack = await gw.gql(`mutation($p: JSON!) { registerDomainPack(pack: $p) }`, { p: SERVICES_PACK });
  if (pack.errors) throw new Error(JSON.stringify(pack.errors));
  const configured = await gw.gql(
    `mutation { configureNamespace(namespace: "acme", packs: ["services@1.0.0"], strict: false) }`,
  );
  if (configured.errors) throw new Error(JSON.stringify(configured.errors));

  const upsert = `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${PAYLOAD} } }`;
  await write(
    gw,
    upsert,
    {
      ns: 'acme',
      e: [
        {
          key: 'person:alice',
          kind: 'person',
          title: 'Alice',
          attributes: { role: 'engineer', email: 'alice@example.com' },
          validFrom: '2024-01-01T00:00:00Z',
        },
        {
          key: 'service:billing',
          kind: 'service',
          title: 'Billing',
          attributes: { tier: 'gold', port: 8080 },
        },
        { key: 'team:payments', kind: 'team', title: 'Payments', scopes: ['team:payments'] },
      ],
    },
    'upsertEntities',
  );
  // A second version of Alice's attributes: the first one becomes history.
  await write(
    gw,
    upsert,
    {
      ns: 'acme',
      e: [
        {
          key: 'person:alice',
          kind: 'person',
          title: 'Alice',
          attributes: { role: 'lead', email: 'alice@example.com' },
          validFrom: '2024-06-01T00:00:00Z',
        },
      ],
    },
    'upsertEntities',
  );
  await write(
    gw,
    upsert,
    { ns: 'beta', e: [{ key: 'thing:one', kind: 'thing', title: "One ü “quoted” \\ back'slash" }] },
    'upsertEntities',
  );

  const record = `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { ${PAYLOAD} } }`;
  const observations = await write(
    gw,
    record,
    {
      ns: 'acme',
      o: [
        {
          source: { system: 'chat', stream: 'room-1', externalId: 'm1' },
          kind: 'message',
          occurredAt: '2024-03-01T10:00:00Z',
          actor: { type: 'person', id: 'alice' },
          content: 'alice: call me at +1 415 555 0100 or bob@example.com; billing moved to team payments',
          provenance: { channel: 'room-1' },
          assertions: [
            {
              fact: {
                subject: 'service:billing',
                predicate: 'owned_by',
                object: 'team:payments',
                validFrom: '2024-03-01T00:00:00Z',
              },
            },
          ],
        },
        {
          source: { system: 'chat', stream: 'room-1', externalId: 'm2' },
          kind: 'message',
          occurredAt: '2024-03-02T10:00:00Z',
          actor: { type: 'person', id: 'bob' },
          content: 'bob: alice leads payments now',
          scopes: ['team:payments'],
          data: { thread: 7, tags: ['a', 'b'] },
          assertions: [
            {
              fact: {
                subject: 'person:alice',
                predicate: 'leads',
                object: 'team:payments',
                validFrom: '2024-03-02T00:00:00Z',
              },
            },
          ],
        },
      ],
    },
    'recordObservations',
  );
  const [redacted, kept] = observations.results.map((r) => r.key!);

  const assert = `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`;
  const facts = await write(
    gw,
    assert,
    {
      ns: 'acme',
      f: [
        {
          subject: 'person:alice',
          predicate: 'works_on',
          object: 'service:billing',
          validFrom: '2024-01-01T00:00:00Z',
          attributes: { since: 2024 },
          confidence: 0.8,
        },
        {
          subject: 'person:alice',
          predicate: 'lives_in',
          object: 'place:paris',
          validFrom: '2024-01-01T00:00:00Z',
        },
        {
          subject: 'person:alice',
          predicate: 'mentors',
          object: 'person:bob',
          validFrom: '2024-02-01T00:00:00Z',
          evidence: 'INFERRED',
          confidence: 0.4,
        },
      ],
    },
    'assertFacts',
  );
  const [worksOn, livesIn] = facts.results.map((r) => r.key!);
  await write(
    gw,
    `mutation($ns: String!, $id: String!, $by: FactInput!) { supersedeFact(namespace: $ns, factId: $id, by: $by) { ${PAYLOAD} } }`,
    {
      ns: 'acme',
      id: livesIn,
      by: {
        subject: 'person:alice',
        predicate: 'lives_in',
        object: 'place:berlin',
        validFrom: '2024-05-01T00:00:00Z',
      },
    },
    'supersedeFact',
  );
  await write(
    gw,
    `mutation($ns: String!, $id: String!) { retractFact(namespace: $ns, factId: $id, reason: "entered by mistake") { ${PAYLOAD} } }`,
    { ns: 'acme', id: worksOn },
    'retractFact',
  );
  await write(
    gw,
    `mutation($ns: String!, $id: String!) { redactObservation(namespace: $ns, observationId: $id, reason: "user request") { ${PAYLOAD} } }`,
    { ns: 'acme', id: redacted },
    'redactObservation',
  );

  await write(
    gw,
    `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { ${PAYLOAD} } }`,
    {
      ns: 'acme',
      d: [
        {
          key: 'doc:runbook',
          title: 'Billing runbook',
          content:
            '# Billing\n\nRestart the billing service with `systemctl restart billing`.\n\n## Owners\n\nTeam payments; page carol@example.com.',
          provenance: { url: 'https://wiki.example/runbook', revision: 3 },
          meta: { lang: 'en' },
          links: ['service:billing'],
        },
        {
          key: 'doc:secret',
          title: 'Payments plan',
          content: 'Only the payments team sees this plan.',
          scopes: ['team:payments'],
        },
      ],
    },
    'retainDocuments',
  );
  const context = await gw.gql(
    `query { context(input: { namespaces: ["acme"], query: "who owns billing?", budgetTokens: 400 }) { traceId } }`,
  );
  if (context.errors) throw new Error(JSON.stringify(context.errors));
  return {
    redactedObservation: redacted!,
    keptObservation: kept!,
    supersededFact: livesIn!,
    retractedFact: worksOn!,
    // Its only evidence was the redacted observation.
    evidenceLostFact: factId(
      'acme',
      'service:billing',
      'owned_by',
      'team:payments',
      new Date('2024-03-01T00:00:00Z'),
    ),
  };
}

/** GraphQL reads whose raw response text must be identical on a copy of the database. */
export function sampleReads(ids: SeededIds): string[] {
  return [
    `{ entity(namespace: "acme", key: "person:alice") { id key kind title scopes attributes old: attributes(asOf: "2024-02-01T00:00:00Z") facts(includeHistory: true, first: 50) { edges { node { factId predicate status statusReason validFrom validTo confidence evidence conflict attributes object { key } } } } observations(first: 20) { edges { node { observationId status content } } } } }`,
    `{ entities(namespace: "acme", first: 50) { totalCount edges { cursor node { key kind title placeholder stale scopes } } } }`,
    `{ entities(namespace: "beta", first: 50) { edges { node { key title } } } }`,
    `{ fact(namespace: "acme", factId: "${ids.supersededFact}") { factId status validTo supersededBy { factId object { key } validFrom } } }`,
    `{ fact(namespace: "acme", factId: "${ids.retractedFact}") { factId status statusReason validTo } }`,
    `{ fact(namespace: "acme", factId: "${ids.evidenceLostFact}") { factId status statusReason observations { observationId } } }`,
    `{ observations(namespace: "acme", first: 50) { totalCount edges { node { observationId kind status statusReason content data provenance scopes occurredAt recordedAt source { system stream externalId } facts { factId status } } } } }`,
    `{ observation(namespace: "acme", observationId: "${ids.redactedObservation}") { status statusReason content data } }`,
    `{ source(namespace: "acme", key: "doc:runbook") { key title content contentSource provenance meta chunkCount pii piiCategories updatedAt } }`,
    `{ source(namespace: "acme", key: "doc:secret") { key content } }`,
    `{ namespaceSettings(namespace: "acme") domainPacks }`,
    `{ auditTrail(namespace: "acme", first: 50) { edges { node { action target principalId at summary } } } }`,
    `{ search(input: { namespaces: ["acme"], query: "restart billing", mode: LEXICAL, k: 5 }) { hits { score chunk { text } } context } }`,
  ];
}

/** Runs the reads over HTTP and returns each raw response body. */
export async function readAll(gw: TestGateway, queries: readonly string[]): Promise<string[]> {
  const bodies: string[] = [];
  for (const query of queries) {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query }),
    });
    bodies.push(await res.text());
  }
  return bodies;
}
