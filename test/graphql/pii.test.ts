import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { missingRootFields } from '../helpers/schema-fields.js';

/**
 * Personal data is masked on every output surface for principals without `pii`, served as is
 * to those with it — and each such request leaves one `pii_access` audit record per namespace.
 */

const NS = 'pii';
const EMAIL = 'alice.smith@example.com';
const PHONE = '+7 916 123-45-67';
const CARD = '4111 1111 1111 1111';
const RAW = [EMAIL, '916 123-45-67', CARD];

type Surface = {
  name: string;
  query: string;
  variables?: () => Record<string, unknown>;
  /** Placeholders the masked answer must show (proof that the PII-bearing text was there). */
  shows: string[];
};

let observationId = '';
let aliceId = '';
let chunkId = '';

const SURFACES: Surface[] = [
  {
    name: 'entity fields (title, attributes)',
    query: `{ entity(namespace: "${NS}", key: "alice") { key title attributes } }`,
    shows: ['[email]', '[phone]', '[card]'],
  },
  {
    name: 'entities connection',
    query: `{ entities(namespace: "${NS}", kinds: ["person"]) { edges { node { title attributes } } } }`,
    shows: ['[email]', '[phone]'],
  },
  {
    name: 'node(id)',
    query: 'query N($id: ID!) { node(id: $id) { ... on Entity { title attributes } } }',
    variables: () => ({ id: aliceId }),
    shows: ['[email]', '[card]'],
  },
  {
    name: 'observation content and data',
    query: 'query O($id: String!) { observation(namespace: "pii", observationId: $id) { content data } }',
    variables: () => ({ id: observationId }),
    shows: ['[email]', '[phone]'],
  },
  {
    name: 'observations connection',
    query: `{ observations(namespace: "${NS}") { edges { node { content data } } } }`,
    shows: ['[email]'],
  },
  {
    name: 'source document (content, provenance)',
    query: `{ source(namespace: "${NS}", key: "doc:contacts") { content provenance } }`,
    shows: ['[email]', '[phone]', '[card]'],
  },
  {
    name: 'chunks of an entity',
    query: `{ entity(namespace: "${NS}", key: "doc:contacts") { chunks { edges { node { text } } } } }`,
    shows: ['[email]', '[card]'],
  },
  {
    name: 'search hits and context text',
    query: `{ search(input: { namespaces: ["${NS}"], query: "quokka contacts", k: 5 }) { context hits { chunk { text } } } }`,
    shows: ['[email]', '[phone]'],
  },
  {
    name: 'recall',
    query: `{ recall(input: { namespaces: ["${NS}"], query: "quokka contacts" }) { context hits { chunk { text } } } }`,
    shows: ['[email]'],
  },
  {
    name: 'ask (answer and its search)',
    query: `{ ask(input: { namespaces: ["${NS}"], question: "quokka contacts" }) { answer search { context } } }`,
    shows: ['[email]'],
  },
  {
    name: 'context pack text and items',
    query: `{ context(input: { namespaces: ["${NS}"], query: "quokka contacts alice", k: 8 }) {
        traceId text sections { items { text title } } } }`,
    shows: ['[email]'],
  },
  {
    name: 'provenance of a chunk (source metadata)',
    query: 'query P($id: ID!) { provenance(id: $id) { steps { kind label metadata } } }',
    variables: () => ({ id: chunkId }),
    shows: ['[email]'],
  },
  {
    name: 'paths between entities',
    query: `{ paths(namespace: "${NS}", from: "alice", to: "acme") { entities { title attributes } } }`,
    shows: ['[email]', '[phone]'],
  },
  {
    name: 'neighbors',
    query: `{ entity(namespace: "${NS}", key: "acme") { neighbors { entity { title attributes } } } }`,
    shows: ['[email]'],
  },
  {
    name: 'typed context sections',
    query: `{ typedContext(input: { namespaces: ["${NS}"], anchors: [{ kind: "person", value: "alice" }],
        traverse: [{ relation: "works_at", direction: OUT }] }) { sections } }`,
    shows: ['[email]'],
  },
];

function leaks(value: unknown): string[] {
  const text = JSON.stringify(value);
  return RAW.filter((raw) => text.includes(raw));
}

describe('PII on every output surface', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  const prompts: string[] = [];
  let llmServer: Server;

  const piiAccess = async () =>
    (
      await gw.db.query<{ principal_id: string; target: string | null; summary: Record<string, unknown> }>(
        `SELECT principal_id, target, summary FROM audit_log WHERE action = 'pii_access' ORDER BY audit_id`,
      )
    ).rows;

  beforeAll(async () => {
    // A fake OpenAI-compatible server: it records every prompt it is sent.
    llmServer = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        prompts.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model: 'fake',
            choices: [
              { index: 0, message: { role: 'assistant', content: 'See [1].' }, finish_reason: 'stop' },
            ],
          }),
        );
      });
    });
    await new Promise<void>((r) => llmServer.listen(0, '127.0.0.1', r));
    const llmUrl = `http://127.0.0.1:${(llmServer.address() as AddressInfo).port}/v1`;

    const written = writeTokensFile([
      { id: 'writer', write: [NS] },
      { id: 'plain', read: [NS] },
      { id: 'cleared', read: [NS], pii: true },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({
      MEMGATE_TOKENS_FILE: written.path,
      MEMGATE_LLM: 'openai:fake',
      OPENAI_BASE_URL: llmUrl,
    });
    const as = { token: tokens.writer };
    const entities = await gw.gql(
      `mutation { upsertEntities(namespace: "${NS}", entities: [
          { key: "alice", kind: "person", title: "Alice (${EMAIL})", attributes: { phone: "${PHONE}", card: "${CARD}" } },
          { key: "acme", kind: "org", title: "Acme" }]) { accepted } }`,
      {},
      as,
    );
    expect(entities.data).toEqual({ upsertEntities: { accepted: 2 } });
    const facts = await gw.gql(
      `mutation { assertFacts(namespace: "${NS}", facts: [{ subject: "alice", predicate: "works_at", object: "acme" }]) { accepted } }`,
      {},
      as,
    );
    expect(facts.data).toEqual({ assertFacts: { accepted: 1 } });
    const obs = await gw.gql<{ recordObservations: { results: { id: string; status: string }[] } }>(
      `mutation R($o: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $o) { results { id status } } }`,
      {
        o: [
          {
            source: { system: 'mail', externalId: 'm-1' },
            kind: 'email',
            occurredAt: '2024-05-01T10:00:00Z',
            content: `Alice wrote from ${EMAIL}: call ${PHONE}.`,
            data: { from: EMAIL, phone: PHONE },
          },
        ],
      },
      as,
    );
    expect(obs.errors).toBeUndefined();
    const docs = await gw.gql(
      `mutation D($d: [DocumentInput!]!) { retainDocuments(namespace: "${NS}", documents: $d) { accepted } }`,
      {
        d: [
          {
            key: 'doc:contacts',
            title: 'Contacts',
            content: `# Contacts\n\nThe quokka team: Alice at ${EMAIL}, phone ${PHONE}, card ${CARD}.`,
            provenance: { author: EMAIL, uri: 'https://kb.example.com/contacts' },
          },
        ],
      },
      as,
    );
    expect(docs.data).toEqual({ retainDocuments: { accepted: 1 } });
    const ids = await gw.gql<{
      entity: { id: string };
      observations: { edges: { node: { observationId: string } }[] };
      doc: { chunks: { edges: { node: { id: string } }[] } };
    }>(
      `{ entity(namespace: "${NS}", key: "alice") { id }
         observations(namespace: "${NS}") { edges { node { observationId } } }
         doc: entity(namespace: "${NS}", key: "doc:contacts") { chunks { edges { node { id } } } } }`,
      {},
      { token: tokens.plain },
    );
    aliceId = ids.data!.entity.id;
    observationId = ids.data!.observations.edges[0]!.node.observationId;
    chunkId = ids.data!.doc.chunks.edges[0]!.node.id;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise<void>((r) => llmServer?.close(() => r()));
  });

  it('masks a dotted US number (415.555.0144) for a principal without pii', async () => {
    const written = await gw.gql(
      `mutation R($o: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $o) { results { id } } }`,
      {
        o: [
          {
            source: { system: 'mail', externalId: 'm-dotted' },
            kind: 'email',
            occurredAt: '2024-05-02T10:00:00Z',
            content: 'Bob: reach me at 415.555.0144 after five.',
          },
        ],
      },
      { token: tokens.writer },
    );
    expect(written.errors).toBeUndefined();
    const read = await gw.gql<{ observations: { edges: { node: { content: string } }[] } }>(
      `{ observations(namespace: "${NS}", since: "2024-05-02T00:00:00Z") { edges { node { content } } } }`,
      {},
      { token: tokens.plain },
    );
    expect(read.data!.observations.edges.map((e) => e.node.content)).toEqual([
      'Bob: reach me at [phone] after five.',
    ]);
  });

  it('sweeps surfaces that all exist in the schema (a renamed root field fails here)', () => {
    for (const surface of SURFACES) expect(missingRootFields(surface.query), surface.name).toEqual([]);
  });

  it('masks the disguised shapes (separators, scripts, invisible characters, obfuscation) it stores', async () => {
    const variants = [
      '4111.1111.1111.1111',
      '4111\u00a01111\u00a01111\u00a01111',
      '11223344595',
      '+1 (415) 555.0144',
      '4155550144',
      '415/555/0144',
      '415·555·0144',
      '415 . 555 . 0144',
      '４１５-５５５-０１４４',
      '٤١٥-٥٥٥-٠١٤٤',
      'alice@localhost',
      'alice(at)example.com',
      'alice@example\u200b.com',
      '"a b"@example.com',
      'alice@[127.0.0.1]',
      'ali\u00adce@example.com',
    ];
    const written = await gw.gql(
      `mutation R($o: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $o) { accepted } }`,
      {
        o: variants.map((v, i) => ({
          source: { system: 'mail', externalId: `m-variant-${i}` },
          kind: 'email',
          occurredAt: '2024-05-03T10:00:00Z',
          content: `variant ${i}: ${v} end`,
        })),
      },
      { token: tokens.writer },
    );
    expect(written.errors).toBeUndefined();
    const read = await gw.gql<{ observations: { edges: { node: { content: string } }[] } }>(
      `{ observations(namespace: "${NS}", since: "2024-05-03T00:00:00Z", first: 50) { edges { node { content } } } }`,
      {},
      { token: tokens.plain },
    );
    const contents = read.data!.observations.edges.map((e) => e.node.content);
    expect(contents).toHaveLength(variants.length);
    for (const content of contents)
      expect(content).toMatch(/^variant \d+: \[(card|snils|phone|email)\] end$/);
  });

  it('masks every surface for a principal without pii, and audits nothing for it', async () => {
    const before = (await piiAccess()).length;
    for (const surface of SURFACES) {
      const res = await gw.gql(surface.query, surface.variables?.() ?? {}, { token: tokens.plain });
      expect(res.errors, surface.name).toBeUndefined();
      expect(leaks(res.data), surface.name).toEqual([]);
      const text = JSON.stringify(res.data);
      for (const placeholder of surface.shows)
        expect(text, `${surface.name} shows ${placeholder}`).toContain(placeholder);
    }
    expect((await piiAccess()).length).toBe(before);
  });

  it('serves a pii principal unmasked, with one pii_access record per request listing what was served', async () => {
    for (const surface of SURFACES) {
      const before = (await piiAccess()).length;
      const res = await gw.gql(surface.query, surface.variables?.() ?? {}, { token: tokens.cleared });
      expect(res.errors, surface.name).toBeUndefined();
      expect(JSON.stringify(res.data), surface.name).toContain(EMAIL);
      const after = await piiAccess();
      expect(after.length, surface.name).toBe(before + 1);
      const record = after[after.length - 1]!;
      expect(record.principal_id).toBe('cleared');
      expect(record.summary.categories, surface.name).toContain('email');
      expect((record.summary.items as unknown[]).length).toBeGreaterThan(0);
      expect(JSON.stringify(record.summary), surface.name).not.toContain(EMAIL);
    }
  });

  it('keeps the audit record to identifiers and categories (never the values)', async () => {
    await gw.gql(SURFACES[0]!.query, {}, { token: tokens.cleared });
    const record = (await piiAccess()).at(-1)!;
    expect(record.summary).toMatchObject({
      itemCount: 1,
      categories: ['card', 'email', 'phone'],
      items: [
        {
          type: 'Entity',
          id: 'alice',
          fields: ['attributes', 'title'],
          categories: ['card', 'email', 'phone'],
        },
      ],
      truncated: false,
    });
  });

  it('masks what is sent to the language model for a principal without pii', async () => {
    prompts.length = 0;
    const plain = await gw.gql(
      `{ ask(input: { namespaces: ["${NS}"], question: "quokka contacts", rerank: true }) { answer synthesized } }`,
      {},
      { token: tokens.plain },
    );
    expect(plain.errors).toBeUndefined();
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) expect(leaks(prompt)).toEqual([]);
    expect(prompts.join('\n')).toContain('[email]');

    prompts.length = 0;
    const before = (await piiAccess()).length;
    await gw.gql(
      `{ ask(input: { namespaces: ["${NS}"], question: "quokka contacts" }) { answer } }`,
      {},
      {
        token: tokens.cleared,
      },
    );
    expect(prompts.join('\n')).toContain(EMAIL);
    const record = (await piiAccess()).at(-1)!;
    expect((await piiAccess()).length).toBe(before + 1);
    expect(JSON.stringify(record.summary.items)).toContain('llm.prompt');
  });

  it('withholds unmasked data when its audit record cannot be written', async () => {
    await gw.db.exec(`
      CREATE OR REPLACE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit storage unavailable'; END $$;
      CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION test_refuse_audit();`);
    try {
      const res = await gw.gql(SURFACES[0]!.query, {}, { token: tokens.cleared });
      expect(res.status).toBe(503);
      expect(res.data ?? null).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
      expect(JSON.stringify(res)).not.toContain(EMAIL);
      // Principals served masked data need no audit record and are unaffected.
      const plain = await gw.gql(SURFACES[0]!.query, {}, { token: tokens.plain });
      expect(plain.errors).toBeUndefined();
    } finally {
      await gw.db.exec('DROP TRIGGER test_refuse_audit ON audit_log; DROP FUNCTION test_refuse_audit();');
    }
  });
});
