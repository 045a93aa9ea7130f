import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import {
  allItems,
  compile,
  readTrace,
  recordObservations,
  retainDocuments,
} from '../helpers/seed-context.js';
import { withStatementFaults } from '../helpers/statement-faults.js';

// One rule for every read path: a channel that fails or times out degrades the answer with a
// warning (and a trace entry for context), it never fails the call. Faults are injected into
// named statements of the real database, through the real HTTP server.

const NS = 'degraded';
const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) {
      hits { chunk { text } channels { channel } }
      channelStats { channel candidates error }
      warnings
    }
  }
`;

async function seed(gw: TestGateway) {
  await retainDocuments(gw, NS, [
    {
      key: 'doc:runbook',
      title: 'Deploy runbook',
      content: 'When the deploy fails on step 3 with error E4021, restart the build runner and retry.',
    },
  ]);
  await recordObservations(gw, NS, [
    {
      source: { system: 'slack', externalId: 'm1' },
      kind: 'message',
      occurredAt: '2024-05-01T10:00:00Z',
      content: 'Alice says the deploy failed on step 3 again.',
      assertions: [{ fact: { subject: 'person:alice', predicate: 'works_on', object: 'project:apollo' } }],
    },
  ]);
}

describe('a failing channel', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(
      {},
      {},
      {
        wrapDatabase: (db) =>
          withStatementFaults(db, { fail: ['lexicalChannel', 'graphChannel', 'contextFactsChannel'] }),
      },
    );
    await seed(gw);
  });
  afterAll(() => gw?.close());

  it('degrades search with a warning; the other channels still answer', async () => {
    const res = await gw.gql<{
      search: {
        hits: { chunk: { text: string }; channels: { channel: string }[] }[];
        channelStats: { channel: string; candidates: number; error: string | null }[];
        warnings: string[];
      };
    }>(SEARCH, { input: { namespaces: [NS], query: 'deploy fails on step 3', k: 5, hops: 1 } });
    expect(res.errors).toBeUndefined();
    const r = res.data!.search;
    expect(r.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^channel_failed: lexical \(channel failed\)/),
        expect.stringMatching(/^channel_failed: graph /),
      ]),
    );
    expect(r.hits.length).toBeGreaterThan(0);
    expect(r.hits.every((h) => h.channels.every((c) => c.channel !== 'lexical'))).toBe(true);
    expect(r.channelStats.find((s) => s.channel === 'lexical')).toEqual({
      channel: 'lexical',
      candidates: 0,
      error: 'channel failed',
    });
    // Nothing of the driver's message reaches the caller.
    expect(JSON.stringify(res)).not.toContain('injected');
  });

  it('degrades recall and ask the same way', async () => {
    const recall = await gw.gql<{ recall: { warnings: string[] } }>(
      `query($input: RecallInput!) { recall(input: $input) { warnings } }`,
      { input: { namespaces: [NS], query: 'deploy step 3' } },
    );
    expect(recall.errors).toBeUndefined();
    expect(recall.data!.recall.warnings.some((w) => w.startsWith('channel_failed: lexical'))).toBe(true);
    const ask = await gw.gql<{ ask: { answer: string; search: { warnings: string[] } } }>(
      `query($input: AskInput!) { ask(input: $input) { answer search { warnings } } }`,
      { input: { namespaces: [NS], question: 'What fails on step 3?' } },
    );
    expect(ask.errors).toBeUndefined();
    expect(ask.data!.ask.search.warnings.some((w) => w.startsWith('channel_failed: lexical'))).toBe(true);
  });

  it('degrades context with a warning and a trace entry', async () => {
    const pack = await compile(gw, { namespaces: [NS], query: 'deploy fails on step 3', strategy: 'HYBRID' });
    expect(pack.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^channel_failed: lexical /),
        expect.stringMatching(/^channel_failed: facts /),
        expect.stringMatching(/^channel_failed: graph /),
      ]),
    );
    expect(allItems(pack).length).toBeGreaterThan(0);
    const trace = (await readTrace(gw, NS, pack.traceId))!;
    expect(trace.channels.lexical).toMatchObject({
      status: 'failed',
      candidates: 0,
      error: 'channel failed',
    });
    expect(trace.channels.vector).toMatchObject({ status: 'ok' });
  });

  it('degrades an AUTO context the same way', async () => {
    const pack = await compile(gw, {
      namespaces: [NS],
      query: 'what did Alice say about the deploy?',
      strategy: 'AUTO',
    });
    expect(pack.warnings.some((w) => w.startsWith('channel_failed: lexical'))).toBe(true);
  });
});

describe('a channel slower than the timeout', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(
      { MEMGATE_STATEMENT_TIMEOUT_MS: '300' },
      {},
      {
        wrapDatabase: (db) => withStatementFaults(db, { delay: { lexicalChannel: 1500 } }),
      },
    );
    await seed(gw);
  });
  afterAll(() => gw?.close());

  it('is abandoned by search and by context, each answering with a warning', async () => {
    const res = await gw.gql<{ search: { hits: unknown[]; warnings: string[] } }>(SEARCH, {
      input: { namespaces: [NS], query: 'deploy fails on step 3', k: 5, mode: 'LEXICAL' },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data!.search.warnings).toEqual([
      expect.stringMatching(/^channel_timeout: lexical \(timed out after 300 ms\)/),
    ]);
    const pack = await compile(gw, { namespaces: [NS], query: 'deploy fails on step 3', strategy: 'HYBRID' });
    expect(pack.warnings.some((w) => w.startsWith('channel_timeout: lexical'))).toBe(true);
  });
});
