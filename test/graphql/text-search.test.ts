import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { insertChunks, updateChunks } from '../helpers/postings.js';
import { writeTokensFile } from '../helpers/principals.js';
import { LOCAL_PRINCIPAL } from '../../src/auth/principal.js';
import { createLoaders } from '../../src/kernel/loaders.js';
import { TextSearchService } from '../../src/modules/text-search/text-search-service.js';

// A namespace's language: setTextSearch validated against pg_ts_config, the re-derivation of
// tsvectors and postings it triggers, `auto` per chunk, and Russian through lexical search.

const RETAIN = /* GraphQL */ `
  mutation Retain($ns: String!, $docs: [DocumentInput!]!) {
    retainDocuments(namespace: $ns, documents: $docs) { accepted rejected }
  }
`;
const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $obs: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $obs) { accepted rejected }
  }
`;
const SET = /* GraphQL */ `
  mutation Set($ns: String!, $ts: String!) {
    setTextSearch(namespace: $ns, textSearch: $ts) {
      namespace textSearch inherited
      configurations { configuration chunks }
      reindex { textSearch state progress done total }
    }
  }
`;
const STATUS = /* GraphQL */ `
  query Status($ns: String!) {
    textSearch(namespace: $ns) { textSearch inherited configurations { configuration chunks } reindex { state progress } }
  }
`;
const SETTINGS = /* GraphQL */ `
  query Settings($ns: String!) {
    textSearch(namespace: $ns) {
      namespace textSearch inherited
      configurations { configuration chunks }
      reindex { textSearch state progress done total }
    }
  }
`;
const SEARCH = /* GraphQL */ `
  query Search($ns: String!, $q: String!, $mode: SearchMode) {
    search(input: { namespaces: [$ns], query: $q, mode: $mode, k: 5, hops: 0 }) { hits { chunk { node { key } } } }
  }
`;

const PASS = {
  key: 'guest-pass',
  title: 'Гостевой пропуск',
  content: 'Чтобы оформить пропуск для гостя, заполните заявку на портале не позднее чем за день до визита.',
};
const VPN = {
  key: 'vpn',
  title: 'VPN',
  content: 'Для подключения к корпоративной сети установите клиент и войдите под своей учётной записью.',
};

interface SearchData {
  search: { hits: { chunk: { node: { key: string } } }[] };
}

describe('text search language per namespace', () => {
  let gw: TestGateway;
  const keys = async (ns: string, q: string, mode = 'LEXICAL') => {
    const res = await gw.gql<SearchData>(SEARCH, { ns, q, mode });
    expect(res.errors).toBeUndefined();
    return res.data!.search.hits.map((h) => h.chunk.node.key);
  };

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw.close();
  });

  it('follows the server default until a namespace sets its own', async () => {
    const res = await gw.gql(STATUS, { ns: 'lang-default' });
    expect(res.data).toEqual({
      textSearch: { textSearch: 'english', inherited: true, configurations: [], reindex: null },
    });
  });

  it('refuses a configuration the database does not have, listing the ones it has', async () => {
    const res = await gw.gql(SET, { ns: 'lang-bad', ts: 'klingon' });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain('russian');
    const injected = await gw.gql(SET, { ns: 'lang-bad', ts: "russian'; DROP TABLE chunks; --" });
    expect(injected.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('stems Russian on both sides and drops its stop words once the namespace is russian', async () => {
    const ns = 'lang-ru';
    await gw.gql(RETAIN, { ns, docs: [PASS, VPN] });
    // In english the inflected question finds nothing and «для» (a stop word) matches VPN.
    expect(await keys(ns, 'как получить гостевые пропуска')).toEqual([]);
    expect(await keys(ns, 'оформление пропусков для гостей')).toContain('vpn');

    const set = await gw.gql(SET, { ns, ts: 'russian' });
    expect(set.errors).toBeUndefined();
    expect(set.data).toEqual({
      setTextSearch: {
        namespace: ns,
        textSearch: 'russian',
        inherited: false,
        configurations: [{ configuration: 'russian', chunks: 2 }],
        reindex: { textSearch: 'russian', state: 'DONE', progress: 1, done: 2, total: 2 },
      },
    });
    expect(await keys(ns, 'как получить гостевые пропуска')).toEqual(['guest-pass']);
    expect(await keys(ns, 'оформление пропусков для гостей')).toEqual(['guest-pass']);
    expect(await keys(ns, 'подключиться к корпоративной сети')).toEqual(['vpn']);
    // Exact identifiers are not stemmed away.
    expect(await keys(ns, 'VPN')).toEqual(['vpn']);
    // New writes take the namespace's language.
    await gw.gql(RETAIN, {
      ns,
      docs: [{ key: 'parking', title: 'Парковка', content: 'Парковочные места распределяет служба охраны.' }],
    });
    expect(await keys(ns, 'парковочное место')).toEqual(['parking']);
  });

  it('keeps postings and statistics equal to a recount after the change', async () => {
    const { rows } = await gw.db.query<{ stale: number; postings: number; recount: number }>(
      `SELECT (SELECT count(*)::int FROM chunk_postings p JOIN chunks c USING (namespace, chunk_id)
               WHERE p.namespace = 'lang-ru' AND p.ts_config <> c.ts_config) AS stale,
              (SELECT count(*)::int FROM chunk_postings WHERE namespace = 'lang-ru') AS postings,
              (SELECT count(*)::int FROM chunks c, unnest(c.tsv) WHERE c.namespace = 'lang-ru') AS recount`,
    );
    expect(rows[0]!.stale).toBe(0);
    expect(rows[0]!.postings).toBe(rows[0]!.recount);
    const stats = await gw.db.query<{ cfg: string; docs: number }>(
      `SELECT ts_config::text AS cfg, doc_count::int AS docs FROM lexical_stats WHERE namespace = 'lang-ru' AND doc_count > 0`,
    );
    expect(stats.rows).toEqual([{ cfg: 'russian', docs: 3 }]);
  });

  it('in auto indexes each observation and document section in its own language', async () => {
    const ns = 'lang-auto';
    const set = await gw.gql(SET, { ns, ts: 'AUTO' });
    expect(set.data).toMatchObject({ setTextSearch: { textSearch: 'auto', reindex: { state: 'DONE' } } });
    const recorded = await gw.gql(RECORD, {
      ns,
      obs: [
        {
          source: { system: 'chat', stream: 's1', externalId: '1' },
          kind: 'message',
          occurredAt: '2026-03-02T10:00:00Z',
          content: 'Мария переехала в Новосибирск и теперь работает удалённо.',
        },
        {
          source: { system: 'chat', stream: 's2', externalId: '2' },
          kind: 'message',
          occurredAt: '2026-03-02T10:01:00Z',
          content: 'The quarterly reports are published on the first Monday of each month.',
        },
      ],
    });
    expect(recorded.data).toEqual({ recordObservations: { accepted: 2, rejected: 0 } });
    const retained = await gw.gql(RETAIN, {
      ns,
      docs: [
        {
          key: 'handbook',
          title: 'Handbook',
          content:
            '# Отпуск\n\nЗаявления на отпуск подают за две недели.\n\n# Laptops\n\nLaptops are ordered through the IT service desk.',
        },
      ],
    });
    expect(retained.data).toEqual({ retainDocuments: { accepted: 1, rejected: 0 } });
    const status = await gw.gql<{
      textSearch: { configurations: { configuration: string; chunks: number }[] };
    }>(STATUS, { ns });
    expect(status.data!.textSearch.configurations).toEqual(
      expect.arrayContaining([
        { configuration: 'english', chunks: 2 },
        { configuration: 'russian', chunks: 2 },
      ]),
    );
    expect(await keys(ns, 'Кто переезжал в Новосибирск?')).toHaveLength(1);
    expect(await keys(ns, 'заявление на отпуска')).toEqual(['handbook']);
    expect(await keys(ns, 'when is the report published')).toHaveLength(1);
    expect(await keys(ns, 'ordering laptop')).toEqual(['handbook']);
    // Re-indexing into auto detects from the same text as the writes did.
    await gw.gql(SET, { ns, ts: 'english' });
    const again = await gw.gql<{ setTextSearch: { configurations: unknown[] } }>(SET, { ns, ts: 'auto' });
    expect(again.data!.setTextSearch.configurations).toEqual(status.data!.textSearch.configurations);
  });

  it('moves a namespace between languages and back, reads answering from either', async () => {
    const ns = 'lang-ru';
    const back = await gw.gql(SET, { ns, ts: 'simple' });
    expect(back.data).toMatchObject({
      setTextSearch: { configurations: [{ configuration: 'simple', chunks: 3 }], reindex: { state: 'DONE' } },
    });
    expect(await keys(ns, 'пропуска')).toEqual([]);
    expect(await keys(ns, 'пропуск')).toEqual(['guest-pass']);
    await gw.gql(SET, { ns, ts: 'russian' });
    expect(await keys(ns, 'пропуска')).toEqual(['guest-pass']);
  });

  it('answers every read correctly while a large namespace is re-indexed over HTTP', async () => {
    const ns = 'lang-big';
    // Written in two statements, not 1,300 requests: the re-indexing is what is under test.
    await gw.db.query(
      `INSERT INTO entities (namespace, key, kind, title)
       SELECT $1, 'n' || i, 'note', 'Заметка ' || i FROM generate_series(1, 1300) AS i`,
      [ns],
    );
    await insertChunks(
      gw.db,
      `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text)
       SELECT $1, 'n' || i, 0, 'note', t, t
       FROM generate_series(1, 1300) AS i, LATERAL (SELECT 'Пропуска для гостей номер ' || i AS t) x`,
      [ns],
    );
    let finished = false;
    const change = gw.gql(SET, { ns, ts: 'russian' }).finally(() => {
      finished = true;
    });
    while (!finished) {
      const search = await gw.gql<SearchData>(SEARCH, { ns, q: 'пропуска 77', mode: 'LEXICAL' });
      expect(search.errors).toBeUndefined();
      // Half re-indexed or not, the chunk that names 77 is found.
      expect(search.data!.search.hits[0]?.chunk.node.key).toBe('n77');
    }
    const done = await change;
    expect(done.data).toMatchObject({
      setTextSearch: { reindex: { state: 'DONE', done: 1300, total: 1300 } },
    });
  });

  it('between batches, reads answer and show the progress so far', async () => {
    const ns = 'lang-batches';
    await gw.db.query(
      `INSERT INTO entities (namespace, key, kind, title)
       SELECT $1, 'n' || i, 'note', 'Заметка ' || i FROM generate_series(1, 1100) AS i`,
      [ns],
    );
    await insertChunks(
      gw.db,
      `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text)
       SELECT $1, 'n' || i, 0, 'note', t, t
       FROM generate_series(1, 1100) AS i, LATERAL (SELECT 'Пропуска для гостей номер ' || i AS t) x`,
      [ns],
    );
    const scope = {
      deps: gw.app.deps,
      db: gw.db,
      principal: LOCAL_PRINCIPAL,
      loaders: createLoaders(gw.db, null),
    };
    const seen: {
      done: number;
      state: string | undefined;
      progress: number | undefined;
      hit: string | undefined;
    }[] = [];
    await new TextSearchService(scope).configure(ns, 'russian', async (done) => {
      const [status, search] = await Promise.all([
        gw.gql<{ textSearch: { reindex: { state: string; progress: number } | null } }>(STATUS, { ns }),
        gw.gql<SearchData>(SEARCH, { ns, q: 'пропуска 77', mode: 'LEXICAL' }),
      ]);
      seen.push({
        done,
        state: status.data?.textSearch.reindex?.state,
        progress: status.data?.textSearch.reindex?.progress,
        hit: search.data?.search.hits[0]?.chunk.node.key,
      });
    });
    expect(seen).toEqual([
      { done: 500, state: 'RUNNING', progress: 500 / 1100, hit: 'n77' },
      { done: 1000, state: 'RUNNING', progress: 1000 / 1100, hit: 'n77' },
      { done: 1100, state: 'RUNNING', progress: 1, hit: 'n77' },
    ]);
  });
});

describe('server default text search', () => {
  it('indexes namespaces that set nothing in MEMGATE_TEXT_SEARCH', async () => {
    const gw = await startTestGateway({ MEMGATE_TEXT_SEARCH: 'russian' });
    try {
      await gw.gql(RETAIN, { ns: 'plain', docs: [PASS, VPN] });
      const status = await gw.gql(STATUS, { ns: 'plain' });
      expect(status.data).toEqual({
        textSearch: {
          textSearch: 'russian',
          inherited: true,
          configurations: [{ configuration: 'russian', chunks: 2 }],
          reindex: null,
        },
      });
      const res = await gw.gql<SearchData>(SEARCH, { ns: 'plain', q: 'гостевые пропуска', mode: 'LEXICAL' });
      expect(res.data!.search.hits.map((h) => h.chunk.node.key)).toEqual(['guest-pass']);
    } finally {
      await gw.close();
    }
  });

  it('refuses to start with a configuration the database does not have', async () => {
    await expect(startTestGateway({ MEMGATE_TEXT_SEARCH: 'klingon' })).rejects.toThrow(
      /MEMGATE_TEXT_SEARCH=klingon is not a text-search configuration/,
    );
  });
});

describe('text search settings under principals', () => {
  it('lets admins change the language; restricted readers see the setting but no counts', async () => {
    const { path, tokens } = writeTokensFile([
      { id: 'admin', read: ['*'], write: ['*'], scopes: ['*'], admin: true },
      { id: 'writer', write: ['team'], scopes: ['workspace:team'] },
      { id: 'reader', read: ['team'], scopes: ['workspace:team'] },
    ]);
    const gw = await startTestGateway({ MEMGATE_TOKENS_FILE: path });
    try {
      await gw.gql(RETAIN, { ns: 'team', docs: [PASS] }, { token: tokens.admin });
      const refused = await gw.gql(SET, { ns: 'team', ts: 'russian' }, { token: tokens.writer });
      expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const notWriter = await gw.gql(SET, { ns: 'team', ts: 'russian' }, { token: tokens.reader });
      expect(notWriter.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const set = await gw.gql(SET, { ns: 'team', ts: 'russian' }, { token: tokens.admin });
      expect(set.data).toMatchObject({ setTextSearch: { reindex: { state: 'DONE', done: 1, total: 1 } } });
      // Counts include chunks outside the reader's scopes, so they are not shown to it.
      const seen = await gw.gql(SETTINGS, { ns: 'team' }, { token: tokens.reader });
      expect(seen.data).toEqual({
        textSearch: {
          namespace: 'team',
          textSearch: 'russian',
          inherited: false,
          configurations: [{ configuration: 'russian', chunks: null }],
          reindex: { textSearch: 'russian', state: 'DONE', progress: 1, done: null, total: null },
        },
      });
      const outsider = await gw.gql(STATUS, { ns: 'other' }, { token: tokens.reader });
      expect(outsider.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    } finally {
      await gw.close();
    }
  });
});

describe('a re-derivation interrupted by a crash', () => {
  it('is resumed when the gateway starts again, and ends DONE with every chunk in the new language', async () => {
    const first = await startTestGateway();
    let second: TestGateway | null = null;
    try {
      const turns = Array.from({ length: 30 }, (_, i) => ({
        source: { system: 'chat', externalId: `r${i}` },
        kind: 'message',
        occurredAt: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString(),
        content: `running notes number ${i}`,
      }));
      const written = await first.gql(
        `mutation($o: [ObservationInput!]!) { recordObservations(namespace: "resume", observations: $o) { accepted } }`,
        { o: turns },
      );
      expect(written.errors).toBeUndefined();
      const set = await first.gql(
        `mutation { setTextSearch(namespace: "resume", textSearch: "russian") { textSearch } }`,
      );
      expect(set.errors).toBeUndefined();
      // What kill -9 half-way leaves behind: the run RUNNING, half of the chunks in the old language.
      await updateChunks(
        first.db,
        `ts_config = 'english'`,
        `c.namespace = 'resume'
           AND c.chunk_id > (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY chunk_id) FROM chunks WHERE namespace = 'resume')`,
      );
      await first.db.query(
        `UPDATE text_search_reindex SET state = 'RUNNING', done = 15, finished_at = NULL WHERE namespace = 'resume'`,
      );
      // A new gateway process on the same database (this one's database stays open for the check).
      second = await startTestGateway(
        {},
        { db: first.db },
        { wrapDatabase: (db) => Object.create(db, { close: { value: async () => undefined } }) },
      );
      const state = async () =>
        (
          await second!.gql<{ textSearch: { reindex: { state: string } | null } }>(
            `{ textSearch(namespace: "resume") { reindex { state } } }`,
          )
        ).data?.textSearch.reindex?.state;
      await waitUntil(async () => (await state()) === 'DONE');
      const configs = await first.db.query<{ ts_config: string }>(
        `SELECT DISTINCT ts_config FROM chunks WHERE namespace = 'resume'`,
      );
      expect(configs.rows).toEqual([{ ts_config: 'russian' }]);
    } finally {
      await second?.close();
      await first.close();
    }
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
