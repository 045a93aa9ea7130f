import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reindexContext } from '../../src/modules/observations/context-index.js';
import { saveContextWindow } from '../../src/kernel/store/context-index-store.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $items: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $items) { accepted results { status key } }
  }
`;

const SEARCH = /* GraphQL */ `
  query Search($input: SearchInput!) {
    search(input: $input) { hits { chunk { text } } }
  }
`;

interface Turn {
  id: string;
  session: string;
  minute: number;
  text: string;
  scopes?: string[];
}

const observation = (t: Turn) => ({
  source: { system: 'chat', stream: t.session, externalId: t.id },
  kind: 'message',
  occurredAt: new Date(Date.UTC(2024, 2, 1, 10, t.minute)).toISOString(),
  content: t.text,
  ...(t.scopes ? { scopes: t.scopes } : {}),
});

describe('contextual indexing: turns are indexed with their neighbours (the write path)', () => {
  let gw: TestGateway;
  const keys = new Map<string, string>();

  const record = async (ns: string, turns: Turn[]) => {
    const res = await gw.gql<{ recordObservations: { accepted: number; results: { key: string }[] } }>(
      RECORD,
      { ns, items: turns.map(observation) },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.recordObservations.accepted).toBe(turns.length);
    for (const [i, t] of turns.entries())
      keys.set(`${ns}/${t.id}`, res.data!.recordObservations.results[i]!.key);
  };
  const indexed = async (ns: string, id: string) => {
    const { rows } = await gw.db.query<{ text: string; searchText: string; own: string | null }>(
      `SELECT text, search_text AS "searchText", own_search_text AS own FROM chunks
       WHERE namespace = $1 AND observation_id = $2`,
      [ns, keys.get(`${ns}/${id}`)],
    );
    return rows[0]!;
  };
  const lexical = async (ns: string, query: string) => {
    const res = await gw.gql<{ search: { hits: { chunk: { text: string } }[] } }>(SEARCH, {
      input: { namespaces: [ns], query, k: 5, mode: 'LEXICAL', hops: 0 },
    });
    expect(res.errors).toBeUndefined();
    return res.data!.search.hits.map((h) => h.chunk.text);
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    await record('chat', [
      { id: 'q', session: 's1', minute: 0, text: 'Which instrument did you pick up last spring?' },
      { id: 'a', session: 's1', minute: 1, text: 'The cello! I practise every morning.' },
      { id: 'other', session: 's2', minute: 0, text: 'Lunch at noon works for me.' },
    ]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('an answer is found by the words of the question before it; its shown text is unchanged', async () => {
    const hits = await lexical('chat', 'instrument spring');
    expect(hits).toContain('The cello! I practise every morning.');
    const answer = await indexed('chat', 'a');
    expect(answer.text).toBe('The cello! I practise every morning.');
    expect(answer.own).toBe('The cello! I practise every morning.');
    // Own text weighs more (twice), then the neighbours of the window.
    expect(answer.searchText).toBe(
      'The cello! I practise every morning.\nThe cello! I practise every morning.\nWhich instrument did you pick up last spring?',
    );
    // Another session lends nothing.
    expect((await indexed('chat', 'other')).searchText).not.toMatch(/cello|instrument/);
  });

  it('a turn written in a later batch joins the index of the turn before it (next window)', async () => {
    await record('chat', [
      { id: 'later', session: 's1', minute: 2, text: 'Any concerts planned with the orchestra?' },
    ]);
    expect((await indexed('chat', 'a')).searchText).toMatch(/orchestra/);
    expect(await lexical('chat', 'orchestra concerts')).toContain('The cello! I practise every morning.');
  });

  it('a restricted turn lends no words to a turn its readers may not all see', async () => {
    await record('mixed', [
      { id: 'p1', session: 's', minute: 0, text: 'Public planning note.' },
      {
        id: 'secret',
        session: 's',
        minute: 1,
        text: 'Salary band negotiation details.',
        scopes: ['workspace:hr'],
      },
      { id: 'p2', session: 's', minute: 2, text: 'Public follow-up.' },
    ]);
    expect((await indexed('mixed', 'p1')).searchText).not.toMatch(/Salary/);
    expect((await indexed('mixed', 'p2')).searchText).not.toMatch(/Salary/);
    // The restricted turn may carry the public words: whoever sees it sees them.
    expect((await indexed('mixed', 'secret')).searchText).toMatch(/Public planning note/);
  });

  it('a redacted turn leaves its neighbours’ index', async () => {
    await record('redact', [
      { id: 'r1', session: 's', minute: 0, text: 'My passport number is in the drawer.' },
      { id: 'r2', session: 's', minute: 1, text: 'Noted, thanks.' },
    ]);
    expect((await indexed('redact', 'r2')).searchText).toMatch(/passport/);
    const res = await gw.gql(
      `mutation($ns: String!, $id: String!) { redactObservation(namespace: $ns, observationId: $id, reason: "asked") { accepted } }`,
      { ns: 'redact', id: keys.get('redact/r1') },
    );
    expect(res.errors).toBeUndefined();
    expect((await indexed('redact', 'r2')).searchText).not.toMatch(/passport/);
    expect(await lexical('redact', 'passport drawer')).toEqual([]);
  });

  it('the window is a namespace setting; reindex applies it to existing data and is idempotent', async () => {
    await saveContextWindow(gw.db, 'chat', { previous: 0, next: 0 });
    const off = await reindexContext(gw.db, ['chat']);
    expect(off.chunks).toBeGreaterThan(0);
    const answer = await indexed('chat', 'a');
    expect(answer).toEqual({ text: answer.text, searchText: answer.text, own: null });
    expect(await lexical('chat', 'instrument spring')).not.toContain('The cello! I practise every morning.');

    // Data written before contextual indexing existed: plain search text, nothing kept aside.
    await saveContextWindow(gw.db, 'chat', null);
    const again = await reindexContext(gw.db, ['chat']);
    expect(again.chunks).toBe(4);
    expect((await indexed('chat', 'a')).searchText).toMatch(/instrument[\s\S]*orchestra/);
    expect(await lexical('chat', 'instrument spring')).toContain('The cello! I practise every morning.');
    expect((await reindexContext(gw.db, ['chat'])).chunks).toBe(0);
  });

  it('a wider window reaches further turns (configureContextWindow re-indexes at once)', async () => {
    const res = await gw.gql<{ configureContextWindow: Record<string, unknown> }>(
      `mutation { configureContextWindow(namespace: "chat", previous: 2, next: 0) }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.configureContextWindow).toMatchObject({ namespace: 'chat', previous: 2, next: 0 });
    const bad = await gw.gql(`mutation { configureContextWindow(namespace: "chat", previous: 9) }`);
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const later = (await indexed('chat', 'later')).searchText;
    expect(later).toMatch(/instrument/);
    expect(later).toMatch(/cello/);
    const reset = await gw.gql<{ configureContextWindow: Record<string, unknown> }>(
      `mutation { configureContextWindow(namespace: "chat") }`,
    );
    expect(reset.data!.configureContextWindow).toMatchObject({ previous: 2, next: 1 });
  });
  it('batches landing between older turns re-index only their neighbourhoods, as a full rebuild would', async () => {
    // Turns arrive out of order across batches (online and bulk), as a year-long stream does:
    // every batch lands between older turns. A full rebuild afterwards finds nothing to change.
    const minutes = Array.from({ length: 48 }, (_, i) => (i * 37) % 48);
    const turn = (i: number): Turn => ({
      id: `t${i}`,
      session: `s${i % 2}`,
      minute: minutes[i]!,
      text: `turn ${i} word${i} ${i % 5 === 0 ? 'long '.repeat(450) : ''}`,
      ...(i % 7 === 3 ? { scopes: ['workspace:ops'] } : {}),
    });
    const turns = Array.from({ length: 48 }, (_, i) => turn(i));
    await record('interleaved', turns.slice(0, 16));
    const bulk = await gw.gql<{ importObservations: { accepted: number; results: { key: string }[] } }>(
      `mutation($ns: String!, $items: [ObservationInput!]!) {
         importObservations(namespace: $ns, observations: $items) { accepted results { key } }
       }`,
      { ns: 'interleaved', items: turns.slice(16, 32).map(observation) },
    );
    expect(bulk.data!.importObservations.accepted).toBe(16);
    for (const [i, r] of bulk.data!.importObservations.results.entries())
      keys.set(`interleaved/${turns[16 + i]!.id}`, r.key);
    await record('interleaved', turns.slice(32, 40));
    await record('interleaved', turns.slice(40));
    const before = await gw.db.query<{ id: string; searchText: string }>(
      `SELECT observation_id AS id, search_text AS "searchText" FROM chunks WHERE namespace = 'interleaved' ORDER BY 1, ord`,
    );
    expect((await reindexContext(gw.db, ['interleaved'])).chunks).toBe(0);
    const after = await gw.db.query(
      `SELECT observation_id AS id, search_text AS "searchText" FROM chunks WHERE namespace = 'interleaved' ORDER BY 1, ord`,
    );
    expect(after.rows).toEqual(before.rows);
    // And the windows are the merged order's: a turn lends to the one after it in time.
    const s1 = turns.filter((t) => t.session === 's1').sort((a, b) => a.minute - b.minute);
    const [first, second] = [s1[0]!, s1[1]!];
    expect((await indexed('interleaved', second.id)).searchText).toContain(`word${first.id.slice(1)} `);
  });
});

describe('configureContextWindow: the namespace-wide re-index is for admins', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  const configure = (who: string, args: string) =>
    gw.gql<{ configureContextWindow: Record<string, unknown> }>(
      `mutation { configureContextWindow(namespace: "shared", ${args}) }`,
      {},
      { token: tokens[who] },
    );

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'alice', read: ['shared'], write: ['shared'], scopes: ['principal:alice'] },
      { id: 'ops', read: ['shared'], write: ['shared'], scopes: ['principal:alice'], admin: true },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    const turns = [
      { id: 'a', session: 's', minute: 0, text: 'alice asks about the quarterly numbers' },
      { id: 'b', session: 's', minute: 1, text: 'ops answers with the figures' },
    ].map((t) => ({ ...t, scopes: ['principal:alice'] }));
    const res = await gw.gql(RECORD, { ns: 'shared', items: turns.map(observation) }, { token: tokens.ops });
    expect(res.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a writer with restricted scopes is refused, and nothing is re-indexed', async () => {
    const settings = () =>
      gw.db.query(`SELECT context_previous, context_next FROM namespace_settings WHERE namespace = 'shared'`);
    const before = (await settings()).rows;
    const refused = await configure('alice', 'previous: 0, next: 0');
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.errors?.[0]?.message).toMatch(/needs an admin principal/);
    expect(refused.data?.configureContextWindow ?? null).toBeNull();
    expect((await settings()).rows).toEqual(before);
    const allowed = await configure('ops', 'previous: 0, next: 0');
    expect(allowed.errors).toBeUndefined();
    expect(allowed.data!.configureContextWindow).toMatchObject({ namespace: 'shared', previous: 0, next: 0 });
  });
});
