import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { compile } from '../helpers/seed-context.js';

// An empty answer says why: a namespace holding nothing the caller can read (unknown, or all
// its rows hidden from the caller — answered alike), a budget smaller than any item, nothing
// relevant. Each as an emptyReason and a warning; search warns about the namespace too.

const NS = 'empty-answers';

describe('empty answers say why', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'admin', read: ['*'], write: ['*'], scopes: ['workspace:core'] },
      { id: 'outsider', read: ['*'], scopes: ['workspace:other'] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    const res = await gw.gql(
      `mutation($o: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $o) { rejected } }`,
      {
        o: [
          {
            source: { system: 'chat', externalId: 'm1' },
            kind: 'message',
            occurredAt: '2024-10-01T09:00:00Z',
            content: 'The staging database moves to the new cluster on Friday.',
            scopes: ['workspace:core'],
          },
        ],
      },
      { token: tokens.admin },
    );
    expect(res.errors).toBeUndefined();
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('a namespace whose rows are all hidden from the caller answers like an unknown one', async () => {
    const hidden = await compile(
      gw,
      { namespaces: [NS], query: 'staging database cluster' },
      tokens.outsider,
    );
    const unknown = await compile(
      gw,
      { namespaces: ['never-written'], query: 'staging database cluster' },
      tokens.outsider,
    );
    expect(hidden.text).toBe('');
    expect(hidden.emptyReason).toBe('unknown_namespace');
    expect(unknown.emptyReason).toBe('unknown_namespace');
    expect(hidden.warnings).toEqual([`unknown_namespace: "${NS}" hold(s) nothing you can read`]);
    expect(unknown.warnings).toEqual(['unknown_namespace: "never-written" hold(s) nothing you can read']);
    // The one who may read it gets the message.
    const seen = await compile(gw, { namespaces: [NS], query: 'staging database cluster' }, tokens.admin);
    expect(seen.emptyReason).toBeNull();
    expect(seen.text).toContain('staging database moves');
  });

  it('search on a namespace holding nothing readable warns', async () => {
    const res = await gw.gql<{ search: { hits: unknown[]; warnings: string[] } }>(
      'query($i: SearchInput!) { search(input: $i) { hits { score } warnings } }',
      { i: { namespaces: ['never-written'], query: 'staging' } },
      { token: tokens.admin },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.search).toEqual({
      hits: [],
      warnings: ['unknown_namespace: "never-written" hold(s) nothing you can read'],
    });
  });

  it('a query nothing in memory matches says no_relevant_memory', async () => {
    const pack = await compile(
      gw,
      { namespaces: [NS], query: 'ticket QX-99123', strategy: 'EXACT' },
      tokens.admin,
    );
    expect(pack.text).toBe('');
    expect(pack.emptyReason).toBe('no_relevant_memory');
    expect(pack.warnings).toEqual(['no_relevant_memory: memory holds nothing that matches the query']);
  });
});
