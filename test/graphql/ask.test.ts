import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_MARKER, NO_DATA_ANSWER } from '../../src/modules/retrieval/pipeline/synthesis.js';
import {
  type ChatRequest,
  type FakeOpenAI,
  rerankPassages,
  startFakeOpenAI,
} from '../helpers/fake-openai.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

// ask (synthesis with citations, the no-data answer, echo, model failures) and search with
// rerank, against a local fake OpenAI-compatible server.

const RETAIN = /* GraphQL */ `
  mutation Retain($ns: String!, $docs: [DocumentInput!]!) {
    retainDocuments(namespace: $ns, documents: $docs) { rejected }
  }
`;
const ASK = /* GraphQL */ `
  query Ask($input: AskInput!) {
    ask(input: $input) {
      question answer synthesized model
      citations { namespace key title sourcePath }
      search { hits { chunk { node { key } } } sources { key } context }
    }
  }
`;
const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) {
      hits { score rerankScore chunk { node { key } } channels { channel rank } }
      rerank { requested applied reason }
    }
  }
`;

interface Answer {
  question: string;
  answer: string;
  synthesized: boolean;
  model: string | null;
  citations: { namespace: string; key: string; title: string; sourcePath: string | null }[];
  search: { hits: { chunk: { node: { key: string } } }[]; sources: { key: string }[]; context: string };
}
interface Searched {
  hits: {
    score: number;
    rerankScore: number | null;
    chunk: { node: { key: string } };
    channels: { channel: string; rank: number }[];
  }[];
  rerank: { requested: boolean; applied: boolean; reason: string | null };
}

const DOCS = [
  {
    key: 'doc:pool',
    title: 'Connection pool',
    content: 'PostgreSQL connection pool exhaustion causes HTTP 504 gateway timeouts.',
    sourcePath: 'kb/pool.md',
  },
  {
    key: 'doc:deploy',
    title: 'Deploy guide',
    content: 'Run the deploy script; when the connection pool is exhausted, raise max_connections to 200.',
    links: ['doc:pool'],
  },
  {
    key: 'doc:oncall',
    title: 'On-call',
    content: 'Escalate pool incidents to ops@example.com or +1 415 555 0100.',
    links: ['doc:deploy'],
  },
  { key: 'doc:lunch', title: 'Lunch', content: 'Tomato soup on Fridays.' },
];

const isRerank = (r: ChatRequest) => r.messages[0]!.content.startsWith('You rate how useful');
const TOKEN_NO_PII = 'token-of-a-principal-without-pii-0001';

describe('ask and rerank', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let echo: TestGateway;
  let dir: string;
  const ask = async (g: TestGateway, input: Record<string, unknown>, token?: string) => {
    const res = await g.gql<{ ask: Answer }>(ASK, { input }, token ? { token } : {});
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return res.data!.ask;
  };
  const search = async (g: TestGateway, input: Record<string, unknown>) => {
    const res = await g.gql<{ search: Searched }>(SEARCH, { input });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return res.data!.search;
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'memgate-ask-'));
    const tokens = join(dir, 'tokens.json');
    writeFileSync(
      tokens,
      JSON.stringify({
        principals: [
          {
            id: 'agent',
            tokenSha256: createHash('sha256').update(TOKEN_NO_PII).digest('hex'),
            read: ['*'],
            write: ['*'],
            scopes: ['*'],
            pii: false,
          },
        ],
      }),
    );
    [gw, echo] = await Promise.all([
      // The model's calls are counted: the extraction worker (retained documents queue jobs) stays off.
      startTestGateway(
        { MEMGATE_LLM: 'openai:fake-model', OPENAI_BASE_URL: fake.url },
        { extractionWorker: false },
      ),
      startTestGateway(),
    ]);
    for (const g of [gw, echo]) {
      const res = await g.gql<{ retainDocuments: { rejected: number } }>(RETAIN, { ns: 'kb', docs: DOCS });
      expect(res.data?.retainDocuments.rejected).toBe(0);
    }
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), echo?.close()]);
    await fake?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers with numbered citations mapped to sources, at temperature 0.1', async () => {
    fake.handle((r) =>
      isRerank(r) ? { status: 500 } : { content: 'Raise max_connections [2]; the pool causes 504s [1][2].' },
    );
    const before = fake.requests.length;
    const a = await ask(gw, {
      namespaces: ['kb'],
      question: 'Why do we get HTTP 504 and what do we do?',
      k: 3,
    });
    expect(a.synthesized).toBe(true);
    expect(a.model).toBe('openai:fake-model');
    expect(a.answer).toBe('Raise max_connections [2]; the pool causes 504s [1][2].');
    const hitKeys = a.search.hits.map((h) => h.chunk.node.key);
    expect(a.citations.map((c) => c.key)).toEqual([hitKeys[1], hitKeys[0]]);
    expect(a.citations.find((c) => c.key === 'doc:pool')).toMatchObject({
      title: 'Connection pool',
      sourcePath: 'kb/pool.md',
    });
    const calls = fake.requests.slice(before);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.temperature).toBe(0.1);
    expect(call.messages[0]!.content).toMatch(/only the context fragments/);
    expect(call.messages[1]!.content).toContain(a.search.context);
    expect(call.messages[1]!.content).toMatch(/Question: Why do we get HTTP 504/);
  });

  it('answers the fixed no-data text without calling a model when nothing is found', async () => {
    const before = fake.requests.length;
    const a = await ask(gw, { namespaces: ['empty'], question: 'Why do we get HTTP 504?' });
    expect(a).toMatchObject({ answer: NO_DATA_ANSWER, synthesized: false, model: null, citations: [] });
    expect(a.search.hits).toEqual([]);
    expect(a.search.context).toBe('');
    expect(fake.requests.length).toBe(before);
  });

  it('with the echo provider returns the context itself, marked as such', async () => {
    const a = await ask(echo, { namespaces: ['kb'], question: 'connection pool', k: 2 });
    expect(a.synthesized).toBe(false);
    expect(a.model).toBe('echo');
    expect(a.answer).toBe(`${ECHO_MARKER}\n\n${a.search.context}`);
    expect(a.citations.map((c) => c.key)).toEqual(a.search.hits.map((h) => h.chunk.node.key));
  });

  it('falls back to the marked context when the model fails, without failing the read', async () => {
    for (const reply of [{ status: 500 }, { raw: 'not json at all' }, { content: '' }] as const) {
      fake.handle(() => reply);
      const a = await ask(gw, { namespaces: ['kb'], question: 'connection pool', k: 2 });
      expect(a.synthesized).toBe(false);
      expect(a.answer).toMatch(/^\[the language model failed \(/);
      expect(a.answer.endsWith(a.search.context)).toBe(true);
    }
  });

  it('only searches when synthesize is false', async () => {
    const before = fake.requests.length;
    const a = await ask(gw, { namespaces: ['kb'], question: 'connection pool', synthesize: false });
    expect(a).toMatchObject({ answer: '', synthesized: false, model: null, citations: [] });
    expect(a.search.hits.length).toBeGreaterThan(0);
    expect(fake.requests.length).toBe(before);
  });

  it('never sends personal data to the model for a principal who may not see it', async () => {
    const withTokens = await startTestGateway({
      MEMGATE_LLM: 'openai:fake-model',
      OPENAI_BASE_URL: fake.url,
      MEMGATE_TOKENS_FILE: join(dir, 'tokens.json'),
    });
    try {
      const seeded = await withTokens.gql<{ retainDocuments: { rejected: number } }>(
        RETAIN,
        { ns: 'kb', docs: DOCS },
        { token: TOKEN_NO_PII },
      );
      expect(seeded.data?.retainDocuments.rejected).toBe(0);
      fake.handle((r) =>
        isRerank(r) ? { content: '{"0": 50, "1": 40, "2": 30, "3": 20}' } : { content: 'Escalate [1].' },
      );
      const before = fake.requests.length;
      const a = await ask(
        withTokens,
        { namespaces: ['kb'], question: 'who do I escalate pool incidents to', k: 2, rerank: true },
        TOKEN_NO_PII,
      );
      // Every prompt the model saw since (the rerank, the answer, and any extraction the
      // retained documents queued) is free of the personal data this principal may not see.
      const prompts = fake.requests.slice(before).map((r) => JSON.stringify(r.messages));
      expect(prompts.filter((p) => p.includes('who do I escalate pool incidents to'))).toHaveLength(2);
      for (const p of prompts) {
        expect(p).not.toContain('ops@example.com');
        expect(p).not.toContain('555 0100');
      }
      expect(a.search.context).not.toContain('ops@example.com');
    } finally {
      await withTokens.close();
    }
  });

  it('reranks the pool (fused hits and neighbours with text) in one call', async () => {
    fake.handle((r) => {
      if (!isRerank(r)) return { content: 'n/a' };
      const passages = rerankPassages(r);
      // Highest score to the lunch passage, then in reverse order of the pool.
      const scores = Object.fromEntries(
        passages.map((p, i) => [String(i), p.includes('Tomato') ? 99 : 10 + i]),
      );
      return { content: JSON.stringify(scores) };
    });
    const before = fake.requests.length;
    const fused = await search(gw, { namespaces: ['kb'], query: 'connection pool exhausted', k: 3, hops: 1 });
    const r = await search(gw, {
      namespaces: ['kb'],
      query: 'connection pool exhausted',
      k: 3,
      hops: 1,
      rerank: true,
    });
    expect(fake.requests.length - before).toBe(1);
    const call = fake.requests.at(-1)!;
    expect(call.temperature).toBe(0);
    const passages = rerankPassages(call);
    // Every distinct node once: the pool holds the fused candidates and the linked neighbours.
    expect(passages.length).toBe(4);
    expect(r.rerank).toEqual({ requested: true, applied: true, reason: null });
    expect(r.hits).toHaveLength(3);
    expect(r.hits[0]!.chunk.node.key).toBe('doc:lunch');
    expect(r.hits[0]!.rerankScore).toBe(0.99);
    const scores = r.hits.map((h) => h.rerankScore!);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(fused.hits.every((h) => h.rerankScore === null)).toBe(true);
  });

  it.each([
    ['HTTP 500', { status: 500 }, /http/],
    ['malformed JSON', { content: '{"0": 91, "1":' }, /malformed/],
    ['a slow, partial reply', { delayMs: 100, reply: { content: '{"0": 1}' } }, /passage 1/],
  ] as const)('keeps the fused order with rerankScore null on %s', async (_name, reply, reason) => {
    fake.handle(() => reply);
    const fused = await search(gw, { namespaces: ['kb'], query: 'connection pool exhausted', k: 3, hops: 0 });
    const r = await search(gw, {
      namespaces: ['kb'],
      query: 'connection pool exhausted',
      k: 3,
      hops: 0,
      rerank: true,
    });
    expect(r.hits.map((h) => h.chunk.node.key)).toEqual(fused.hits.map((h) => h.chunk.node.key));
    expect(r.hits.map((h) => h.score)).toEqual(fused.hits.map((h) => h.score));
    expect(r.hits.every((h) => h.rerankScore === null)).toBe(true);
    expect(r.rerank.applied).toBe(false);
    expect(r.rerank.reason).toMatch(reason);
  });

  it('reranks nothing without a model (echo) and says why', async () => {
    const r = await search(echo, { namespaces: ['kb'], query: 'connection pool', k: 2, rerank: true });
    expect(r.rerank).toEqual({ requested: true, applied: false, reason: 'no language model configured' });
    expect(r.hits.every((h) => h.rerankScore === null)).toBe(true);
  });
});
