import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

// search / recall over real HTTP: channels, weighted RRF, filters, listing, namespace and
// visibility isolation of candidates, hostile query text, graph neighbours.

const RETAIN = /* GraphQL */ `
  mutation Retain($ns: String!, $docs: [DocumentInput!]!) {
    retainDocuments(namespace: $ns, documents: $docs) { accepted rejected results { status message } }
  }
`;
const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $obs: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $obs) { accepted rejected results { status message } }
  }
`;
const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) {
      mode
      hits {
        score rrf exactIdBonus rerankScore
        signals { label terms asking }
        chunk { namespace text kind meta node { key kind } }
        channels { channel rank score }
      }
      neighbors { entity { key } distance via { predicate subject { key } object { key } } }
      sources { namespace key title sourcePath }
      context
      channelStats { channel candidates ms error }
      rerank { requested applied reason }
    }
  }
`;
const RECALL = /* GraphQL */ `
  query Recall($input: RecallInput!) { recall(input: $input) { hits { chunk { node { key } } } context } }
`;

interface Hit {
  score: number;
  rrf: number;
  exactIdBonus: number;
  rerankScore: number | null;
  signals: { label: number; terms: number; asking: number };
  chunk: {
    namespace: string;
    text: string;
    kind: string;
    meta: Record<string, unknown>;
    node: { key: string; kind: string };
  };
  channels: { channel: string; rank: number; score: number | null }[];
}
interface Result {
  mode: string;
  hits: Hit[];
  neighbors: {
    entity: { key: string };
    distance: number;
    via: { predicate: string; subject: { key: string }; object: { key: string } };
  }[];
  sources: { namespace: string; key: string; title: string; sourcePath: string | null }[];
  context: string;
  channelStats: { channel: string; candidates: number; ms: number; error: string | null }[];
  rerank: { requested: boolean; applied: boolean; reason: string | null };
}

const DOCS = [
  {
    key: 'doc:deploy',
    title: 'Deploy guide',
    kind: 'runbook',
    content: '# Deploy\nRun the deploy script. Error E1234 means the connection pool is exhausted.',
    meta: { team: 'ops', lang: 'en' },
    sourcePath: 'kb/deploy.md',
  },
  {
    key: 'doc:pool',
    title: 'Connection pool',
    content: '# Pool\nPostgreSQL connection pool exhaustion causes HTTP 504 gateway timeouts.',
    meta: { team: 'db', lang: 'en' },
    links: ['doc:deploy'],
  },
  {
    key: 'doc:lunch',
    title: 'Lunch menu',
    content: 'Soup of the day is tomato. The cafeteria opens at noon.',
    meta: { team: 'facilities' },
    scopes: ['project:canteen'],
  },
  {
    key: 'doc:secret',
    title: 'Secret plan',
    content: 'The secret rollout plan of workspace two: migrate the connection pool on Friday.',
    scopes: ['workspace:w2'],
  },
  {
    key: 'doc:oncall',
    title: 'On-call handbook',
    content: 'Pager rotation and escalation contacts for the platform team.',
    links: ['doc:pool'],
  },
  ...Array.from({ length: 18 }, (_, i) => ({
    key: `doc:zebra-${String(i).padStart(2, '0')}`,
    title: `Zebra note ${i}`,
    content: `A memo about the zebra migration, part ${i}.`,
  })),
];

const message = (id: string, at: string, content: string) => ({
  source: { system: 'chat', stream: 'general', externalId: id },
  kind: 'message',
  occurredAt: at,
  actor: { type: 'person', id: 'alice' },
  content,
});

const TOKEN_W1 = 'token-for-w1-principal-0123456789';
const TOKEN_W2 = 'token-for-w2-principal-0123456789';
const TOKEN_KB_ONLY = 'token-for-kb-only-principal-0123';
const sha = (t: string) => createHash('sha256').update(t).digest('hex');

describe('search and recall', () => {
  let gw: TestGateway;
  let dir: string;
  const search = async (input: Record<string, unknown>, token = TOKEN_W2) => {
    const res = await gw.gql<{ search: Result }>(SEARCH, { input }, { token });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return { ...res.data!.search, statements: res.extensions?.sql?.statements ?? 0 };
  };
  const keys = (r: { hits: Hit[] }) => r.hits.map((h) => h.chunk.node.key);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memgate-search-'));
    const tokens = join(dir, 'tokens.json');
    writeFileSync(
      tokens,
      JSON.stringify({
        principals: [
          { id: 'w1', tokenSha256: sha(TOKEN_W1), read: ['*'], write: ['*'], scopes: ['workspace:w1'] },
          { id: 'w2', tokenSha256: sha(TOKEN_W2), read: ['*'], write: ['*'], scopes: ['workspace:w2'] },
          { id: 'kb-only', tokenSha256: sha(TOKEN_KB_ONLY), read: ['kb'], write: [], scopes: ['*'] },
        ],
      }),
    );
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: tokens });
    const write = async (q: string, vars: Record<string, unknown>) => {
      const res = await gw.gql<Record<string, { rejected: number; results: unknown[] }>>(q, vars, {
        token: TOKEN_W2,
      });
      expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
      expect(Object.values(res.data!)[0]!.rejected, JSON.stringify(res.data)).toBe(0);
    };
    await write(RETAIN, { ns: 'kb', docs: DOCS });
    await write(RETAIN, { ns: 'other', docs: [DOCS[0]] });
    await write(RECORD, {
      ns: 'kb',
      obs: [
        message('m1', '2024-01-10T09:00:00Z', 'alice: the zebra migration starts in January'),
        message('m2', '2024-03-05T09:00:00Z', 'alice: the zebra migration is done'),
        message('m3', '2024-06-01T09:00:00Z', 'alice: lunch was tomato soup again'),
      ],
    });
  });
  afterAll(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('fuses lexical and vector ranks by weighted RRF and explains every hit', async () => {
    const weights = { vector: 0.5, lexical: 1, exact: 1 };
    const r = await search({ namespaces: ['kb'], query: 'connection pool exhausted', k: 5, weights });
    expect(r.mode).toBe('HYBRID');
    expect(keys(r).slice(0, 2).sort()).toEqual(['doc:deploy', 'doc:pool']);
    for (const hit of r.hits) {
      const expected = hit.channels.reduce(
        (sum, c) => sum + weights[c.channel as keyof typeof weights] / (60 + c.rank + 1),
        0,
      );
      expect(hit.rrf).toBeCloseTo(expected, 12);
      expect(hit.score).toBeCloseTo(
        hit.rrf + hit.exactIdBonus + hit.signals.label + hit.signals.terms + hit.signals.asking,
        12,
      );
      expect(hit.rerankScore).toBeNull();
    }
    const top = r.hits[0]!;
    expect(top.channels.map((c) => c.channel).sort()).toEqual(['lexical', 'vector']);
    const vector = top.channels.find((c) => c.channel === 'vector')!;
    expect(vector.score).toBeGreaterThan(0);
    expect(vector.score).toBeLessThanOrEqual(1);
    expect(r.hits.map((h) => h.score)).toEqual([...r.hits.map((h) => h.score)].sort((a, b) => b - a));
    // The links of the candidate observations to entities the query names come with their rows.
    expect(r.channelStats.map((s) => s.channel).sort()).toEqual(['embed', 'graph', 'lexical', 'vector']);
  });

  it('lets a request reweight the channels and change the RRF constant', async () => {
    const query = 'zebra migration memo about the pool';
    const lexicalOnly = await search({ namespaces: ['kb'], query, k: 10, mode: 'LEXICAL', hops: 0 });
    const vectorOnly = await search({ namespaces: ['kb'], query, k: 10, mode: 'VECTOR', hops: 0 });
    const asLexical = await search({
      namespaces: ['kb'],
      query,
      k: 10,
      hops: 0,
      weights: { vector: 0, lexical: 1 },
    });
    const asVector = await search({
      namespaces: ['kb'],
      query,
      k: 10,
      hops: 0,
      weights: { vector: 1, lexical: 0 },
    });
    expect(keys(asLexical)).toEqual(keys(lexicalOnly));
    expect(keys(asVector)).toEqual(keys(vectorOnly));
    expect(keys(lexicalOnly)).not.toEqual(keys(vectorOnly));
    expect(
      lexicalOnly.hits.every((h) =>
        h.channels.every((c) => c.channel === 'lexical' || c.channel === 'exact'),
      ),
    ).toBe(true);
    expect(vectorOnly.hits.every((h) => h.channels.every((c) => c.channel === 'vector'))).toBe(true);
    const k10 = await search({
      namespaces: ['kb'],
      query,
      k: 3,
      hops: 0,
      rrfK: 10,
      weights: { vector: 1, lexical: 1 },
    });
    for (const hit of k10.hits) {
      expect(hit.rrf).toBeCloseTo(
        hit.channels.reduce((s, c) => s + 1 / (10 + c.rank + 1), 0),
        12,
      );
    }
  });

  it('finds identifiers literally and gives them the exact-identifier bonus', async () => {
    const r = await search({ namespaces: ['kb'], query: 'what does E1234 mean', k: 3 });
    expect(keys(r)[0]).toBe('doc:deploy');
    expect(r.hits[0]!.exactIdBonus).toBe(0.01);
    expect(r.hits[0]!.channels.some((c) => c.channel === 'exact' && c.rank === 0)).toBe(true);
    expect(r.hits.slice(1).every((h) => h.exactIdBonus === 0)).toBe(true);
  });

  it('filters by meta containment, kinds, scopes and time window', async () => {
    const q = 'connection pool deploy tomato zebra';
    const ops = await search({
      namespaces: ['kb'],
      query: q,
      k: 20,
      filters: { meta: { team: 'ops', lang: 'en' } },
    });
    expect(keys(ops)).toEqual(['doc:deploy']);
    const en = await search({ namespaces: ['kb'], query: q, k: 20, filters: { meta: { lang: 'en' } } });
    expect(keys(en).sort()).toEqual(['doc:deploy', 'doc:pool']);
    const runbooks = await search({ namespaces: ['kb'], query: q, k: 20, filters: { kinds: ['runbook'] } });
    expect(keys(runbooks)).toEqual(['doc:deploy']);
    const canteen = await search({
      namespaces: ['kb'],
      query: q,
      k: 20,
      filters: { scopes: ['project:canteen'] },
    });
    expect(keys(canteen)).toEqual(['doc:lunch']);
    const window = await search({
      namespaces: ['kb'],
      query: 'zebra migration',
      k: 20,
      filters: { kinds: ['message'], since: '2024-02-01T00:00:00Z', until: '2024-06-01T09:00:00Z' },
    });
    expect(window.hits.map((h) => h.chunk.text)).toEqual(['alice: the zebra migration is done']);
    // Filters are predicates of every channel: nothing outside them is even a candidate.
    const stats = Object.fromEntries(ops.channelStats.map((s) => [s.channel, s.candidates]));
    expect(stats.lexical).toBe(1);
    expect(stats.vector).toBe(1);
  });

  it('lists by kind, newest first, when the query is empty', async () => {
    const r = await search({ namespaces: ['kb'], query: '', k: 10, filters: { kinds: ['message'] } });
    expect(r.hits.map((h) => h.chunk.text)).toEqual([
      'alice: lunch was tomato soup again',
      'alice: the zebra migration is done',
      'alice: the zebra migration starts in January',
    ]);
    expect(r.hits.map((h) => h.channels)).toEqual(
      [0, 1, 2].map((rank) => [{ channel: 'list', rank, score: null }]),
    );
  });

  it('never makes a row of another namespace a candidate', async () => {
    const kbOnly = await search({
      namespaces: ['kb'],
      query: 'E1234 connection pool exhausted',
      k: 20,
      hops: 0,
    });
    expect(kbOnly.hits.every((h) => h.chunk.namespace === 'kb')).toBe(true);
    const both = await search({
      namespaces: ['kb', 'other'],
      query: 'E1234 connection pool exhausted',
      k: 20,
      hops: 0,
    });
    const namespaces = new Set(both.hits.map((h) => h.chunk.namespace));
    expect(namespaces).toEqual(new Set(['kb', 'other']));
    // `other` holds one chunk: whatever the query, nothing of `kb` is ever ranked there.
    const other = await search({ namespaces: ['other'], query: 'tomato soup zebra', k: 20 });
    expect(other.hits.map((h) => h.chunk.namespace)).toEqual(['other']);
    const stats = Object.fromEntries(other.channelStats.map((s) => [s.channel, s.candidates]));
    expect(stats).toMatchObject({ lexical: 0, vector: 1 });
    // A namespace the principal may not read is refused before any SQL runs.
    const denied = await gw.gql(
      SEARCH,
      { input: { namespaces: ['kb', 'other'], query: 'pool' } },
      { token: TOKEN_KB_ONLY },
    );
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('never makes a row the principal may not see a candidate', async () => {
    const visible = await search(
      { namespaces: ['kb'], query: 'secret rollout plan Friday', k: 20 },
      TOKEN_W2,
    );
    expect(keys(visible)[0]).toBe('doc:secret');
    const hidden = await search({ namespaces: ['kb'], query: 'secret rollout plan Friday', k: 20 }, TOKEN_W1);
    expect(keys(hidden)).not.toContain('doc:secret');
    expect(hidden.context).not.toContain('secret rollout');
    const exactHidden = await search(
      { namespaces: ['kb'], query: 'secret rollout', k: 20, mode: 'LEXICAL' },
      TOKEN_W1,
    );
    expect(exactHidden.channelStats.find((s) => s.channel === 'lexical')!.candidates).toBe(0);
  });

  it('answers hostile query text without an error', async () => {
    const hostile = [
      `"connection pool" & | ! <-> :* ( ) ' '' \\ %_`,
      `pool' OR 1=1; DROP TABLE chunks; --`,
      '🙂 🏳️‍🌈 pool 日本語 ﷽',
      'a:* & !b | (c <-> d) <<<end>>> <|im_start|>system',
      'E1234%_\\',
      `${'pool '.repeat(2100)}`, // 10.5 KB
      '\u202e\u200b',
    ];
    for (const query of hostile) {
      for (const mode of ['HYBRID', 'LEXICAL', 'VECTOR']) {
        const res = await gw.gql<{ search: Result }>(
          SEARCH,
          { input: { namespaces: ['kb'], query, mode } },
          { token: TOKEN_W2 },
        );
        expect(
          res.errors,
          `${mode} ${JSON.stringify(query.slice(0, 40))}: ${JSON.stringify(res.errors)}`,
        ).toBeUndefined();
        expect(res.status).toBe(200);
      }
    }
    // NUL cannot be stored or compared by PostgreSQL: refused with a code, never an internal error.
    const nul = await gw.gql(
      SEARCH,
      { input: { namespaces: ['kb'], query: 'null\u0000byte pool' } },
      { token: TOKEN_W2 },
    );
    if (nul.errors) expect(nul.errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const tooLong = await gw.gql(
      SEARCH,
      { input: { namespaces: ['kb'], query: 'x'.repeat(40_000) } },
      { token: TOKEN_W2 },
    );
    expect(tooLong.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('returns graph neighbours of the top hits as neighbours and sources', async () => {
    const one = await search({ namespaces: ['kb'], query: 'HTTP 504 gateway timeouts', k: 1, hops: 1 });
    expect(keys(one)).toEqual(['doc:pool']);
    expect(one.neighbors.map((n) => n.entity.key).sort()).toEqual(['doc:deploy', 'doc:oncall']);
    for (const n of one.neighbors) {
      expect(n.distance).toBe(1);
      expect(n.via.predicate).toBe('LINKS_TO');
      expect([n.via.subject.key, n.via.object.key]).toContain('doc:pool');
    }
    expect(one.sources.map((s) => s.key)).toEqual(['doc:pool', ...one.neighbors.map((n) => n.entity.key)]);
    expect(one.sources[0]).toMatchObject({ namespace: 'kb', title: 'Connection pool' });
    expect(one.context).toContain('## RELATED ENTITIES');
    expect(one.context).toContain('- [doc:oncall] (document) On-call handbook (distance 1)');
    // Two hops: the deploy guide's neighbour (the pool) and, through it, the on-call handbook.
    const two = await search({ namespaces: ['kb'], query: 'E1234', k: 1, hops: 2 });
    expect(keys(two)).toEqual(['doc:deploy']);
    expect(two.neighbors.map((n) => [n.entity.key, n.distance])).toEqual([
      ['doc:pool', 1],
      ['doc:oncall', 2],
    ]);
    expect(two.neighbors[1]!.via.subject.key).toBe('doc:oncall');
    const none = await search({ namespaces: ['kb'], query: 'HTTP 504 gateway timeouts', k: 1, hops: 0 });
    expect(none.neighbors).toEqual([]);
    expect(none.channelStats.some((s) => s.channel === 'graph')).toBe(false);
  });

  it("reads the hits' nodes and the neighbours' entities and facts exactly as entity() and fact() do", async () => {
    const ENTITY_FIELDS = 'id key kind title attributes confidence lastSeen origin sourcePath';
    const FACT_FIELDS =
      'id factId predicate validFrom validTo recordedAt confidence conflict evidence status statusReason scopes attributes sourcePath';
    const res = await gw.gql<{
      search: {
        hits: { chunk: { node: Record<string, unknown> } }[];
        neighbors: { entity: Record<string, unknown>; via: Record<string, unknown> }[];
      };
    }>(
      `query($input: SearchInput!) { search(input: $input) {
         hits { chunk { node { ${ENTITY_FIELDS} } } }
         neighbors { entity { ${ENTITY_FIELDS} } via { ${FACT_FIELDS} } } } }`,
      { input: { namespaces: ['kb'], query: 'HTTP 504 gateway timeouts', k: 1, hops: 1 } },
      { token: TOKEN_W2 },
    );
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const { hits, neighbors } = res.data!.search;
    expect(neighbors.length).toBeGreaterThan(0);
    for (const entity of [hits[0]!.chunk.node, ...neighbors.map((n) => n.entity)]) {
      const alone = await gw.gql<{ entity: unknown }>(
        `query($key: String!) { entity(namespace: "kb", key: $key) { ${ENTITY_FIELDS} } }`,
        { key: entity.key },
        { token: TOKEN_W2 },
      );
      expect(entity).toEqual(alone.data!.entity);
    }
    for (const { via } of neighbors) {
      const alone = await gw.gql<{ fact: unknown }>(
        `query($id: String!) { fact(namespace: "kb", factId: $id) { ${FACT_FIELDS} } }`,
        { id: via.factId },
        { token: TOKEN_W2 },
      );
      expect(via).toEqual(alone.data!.fact);
    }
  });

  it('renders a numbered context with key, title, heading and source', async () => {
    const r = await search({ namespaces: ['kb'], query: 'E1234', k: 1, hops: 0 });
    expect(r.context).toBe(
      '=== memgate context ===\n\n## DOCUMENTS\n\n' +
        '<<<source [1] doc:deploy | Deploy guide — Deploy | source: kb/deploy.md>>>\n' +
        'Run the deploy script. Error E1234 means the connection pool is exhausted.\n<<<end>>>\n',
    );
  });

  it('recall sizes the result by budget: LOW 4, MID 8, HIGH 16', async () => {
    for (const [budget, n] of [
      ['LOW', 4],
      ['MID', 8],
      ['HIGH', 16],
    ] as const) {
      const res = await gw.gql<{ recall: { hits: unknown[] } }>(
        RECALL,
        { input: { namespaces: ['kb'], query: 'zebra migration memo', budget } },
        { token: TOKEN_W2 },
      );
      expect(res.errors).toBeUndefined();
      expect(res.data!.recall.hits).toHaveLength(n);
    }
  });

  it('costs a bounded number of SQL statements', async () => {
    const r = await search({ namespaces: ['kb'], query: 'E1234 connection pool', k: 8, hops: 1 });
    // vector, lexical, exact; then the hits' rows (with their nodes and the entities the query
    // names that their observations are linked to) and the graph walk (with the neighbours'
    // entities and facts): nothing is left for the result to read.
    expect(r.neighbors.length).toBeGreaterThan(0);
    expect(r.statements).toBe(5);
  });

  it('rejects bad input with BAD_USER_INPUT', async () => {
    for (const input of [
      { namespaces: [], query: 'x' },
      { namespaces: ['kb'], query: 'x', k: 0 },
      { namespaces: ['kb'], query: 'x', k: 101 },
      { namespaces: ['kb'], query: 'x', hops: 3 },
      { namespaces: ['kb'], query: 'x', rrfK: -1 },
      { namespaces: ['kb'], query: 'x', weights: { vector: -1 } },
      { namespaces: ['kb'], query: 'x', filters: { kinds: ['Not A Kind'] } },
      {
        namespaces: ['kb'],
        query: 'x',
        filters: { since: '2024-02-01T00:00:00Z', until: '2024-01-01T00:00:00Z' },
      },
      { namespaces: ['bad namespace!'], query: 'x' },
    ]) {
      const res = await gw.gql(SEARCH, { input }, { token: TOKEN_W2 });
      expect(res.errors?.[0]?.extensions?.code, JSON.stringify(input)).toBe('BAD_USER_INPUT');
    }
  });
});
