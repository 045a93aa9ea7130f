import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import {
  LABEL_FIELD_BOOST,
  type LexicalChannelInput,
  lexicalChannel,
} from '../../src/modules/retrieval/pipeline/channels/lexical.js';
import { NO_FILTERS } from '../../src/modules/retrieval/pipeline/channels/filters.js';
import { type ChunkWrite, replaceChunks } from '../../src/kernel/store/chunk-store.js';
import { deleteChunks, updateChunks } from '../helpers/postings.js';
import { openTestDatabase } from '../helpers/test-database.js';

// Okapi BM25 in SQL (lexical channel) checked against a plain implementation of the formula
// over the same lexemes, and the postings/statistics the chunk statements write against a recount.

const K1 = 1.2;
const B = 0.75;

function chunk(order: number, text: string, tsConfig = 'english'): ChunkWrite {
  return {
    order,
    kind: 'note',
    title: null,
    heading: null,
    text,
    searchText: text,
    sourcePath: null,
    meta: {},
    scopes: [],
    visibility: [],
    observationId: null,
    occurredAt: null,
    pii: false,
    piiCategories: [],
    embedding: null,
    tsConfig,
  };
}

const filter = (namespaces: string[]) => ({ ...NO_FILTERS, namespaces, visibleScopes: null });

async function lexemes(db: Database, cfg: string, text: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ lexeme: string; tf: number }>(
    `SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf FROM unnest(to_tsvector($1::regconfig, $2))`,
    [cfg, text],
  );
  return new Map(rows.map((r) => [r.lexeme, Number(r.tf)]));
}

/** Textbook BM25 over documents given as lexeme → tf maps. */
function referenceBm25(docs: Map<string, number>[], query: Set<string>): number[] {
  const n = docs.length;
  const lengths = docs.map((d) => [...d.values()].reduce((a, b) => a + b, 0));
  const avgdl = lengths.reduce((a, b) => a + b, 0) / n;
  return docs.map((d, i) => {
    let score = 0;
    for (const term of query) {
      const tf = d.get(term);
      if (!tf) continue;
      const df = docs.filter((x) => x.has(term)).length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[i]!) / avgdl));
    }
    return score;
  });
}

const TEXTS = [
  'Caroline went to the LGBTQ support group yesterday and it was powerful.',
  'Melanie painted a sunrise over the lake last year.',
  'The support group meets every Tuesday; Caroline says the group helped her a lot.',
  'Deploys fail with error E1234 when the connection pool is exhausted.',
  'Melanie and her kids went camping by the lake, and the kids loved the lake.',
  'A short note.',
];

describe('BM25 lexical channel', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
    await replaceChunks(
      db,
      'bm',
      'notes',
      TEXTS.map((t, i) => chunk(i, t)),
    );
    await replaceChunks(db, 'other', 'notes', [
      chunk(0, 'Caroline support group support group support group'),
    ]);
  });
  afterAll(async () => {
    await db?.close();
  });
  /** The channel over one namespace with the bench's defaults (k1 1.2, b 0.75, 64 terms, no prefilter). */
  const rank = (namespace: string, query: string, options: Partial<LexicalChannelInput> = {}) =>
    lexicalChannel(db, {
      filter: filter([namespace]),
      query,
      limit: 10,
      k1: K1,
      b: B,
      maxTerms: 64,
      prefilter: null,
      ...options,
    });

  it('scores exactly Okapi BM25 (k1 1.2, b 0.75) with df, N and avgdl of the namespace only', async () => {
    const query = 'Did Caroline find the support group at the lake helpful?';
    const docs = await Promise.all(TEXTS.map((t) => lexemes(db, 'english', t)));
    const q = new Set((await lexemes(db, 'english', query)).keys());
    const expected = referenceBm25(docs, q);
    const got = await rank('bm', query);
    const { rows } = await db.query<{ chunkId: number; ord: number }>(
      `SELECT chunk_id AS "chunkId", ord FROM chunks WHERE namespace = 'bm'`,
    );
    const ordOf = new Map(rows.map((r) => [Number(r.chunkId), r.ord]));
    expect(got.length).toBe(expected.filter((s) => s > 0).length);
    for (const hit of got) expect(hit.score).toBeCloseTo(expected[ordOf.get(hit.chunkId)!]!, 9);
    // Best first; the other namespace's chunk (which would score highest) is never a candidate.
    const scores = got.map((h) => h.score!);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(got.every((h) => h.namespace === 'bm')).toBe(true);
  });

  it('weighs a title holding a word of the query as the label field: score × (1 + LABEL_FIELD_BOOST)', async () => {
    const text = 'We painted a sunset over the lake last weekend.';
    // As the observation service writes a turn: the actor's name is searchable in every turn.
    const turns = [
      ['message · Caroline · 2023-05-18 13:47 UTC', `Caroline\n${text}`],
      ['message · Melanie · 2023-05-18 13:48 UTC', `Melanie\n${text}`],
      ['message · Mel · 2023-05-18 13:49 UTC', `Mel\n${text}`],
      ['message · Dana · 2023-05-18 13:50 UTC', `Melanie\n${text}`],
    ] as const;
    await replaceChunks(
      db,
      'labels',
      'turns',
      turns.map(([title, searchText], i) => ({ ...chunk(i, text), title, searchText })),
    );
    const { rows } = await db.query<{ chunkId: number; ord: number }>(
      `SELECT chunk_id AS "chunkId", ord FROM chunks WHERE namespace = 'labels'`,
    );
    const ordOf = new Map(rows.map((r) => [Number(r.chunkId), r.ord]));
    const docs = await Promise.all(turns.map(([, t]) => lexemes(db, 'english', t)));
    const query = 'What did Melanie paint over the lake in 2023?';
    const bm25 = referenceBm25(docs, new Set((await lexemes(db, 'english', query)).keys()));
    // "Melanie" is a whole word of one title only: "Mel" is not, nor a number of the timestamp,
    // and Dana's turn names Melanie in its text, not its title.
    const named = await rank('labels', query);
    const expected = bm25.map((s, i) => (i === 1 ? s * (1 + LABEL_FIELD_BOOST) : s));
    expect(named.map((h) => ordOf.get(h.chunkId))).toEqual([1, 3, 0, 2]);
    for (const hit of named) expect(hit.score).toBeCloseTo(expected[ordOf.get(hit.chunkId)!]!, 9);
    // Without a query word in any title, the same text scores the same everywhere.
    const plain = await rank('labels', 'what did they paint over the lake');
    expect(new Set(plain.map((h) => h.score!.toFixed(9))).size).toBe(1);
  });

  it("keeps the postings' label flag right through insert, title and text updates, and reindex", async () => {
    const ns = 'label-flag';
    const flagged = async () =>
      (
        await db.query<{ lexeme: string }>(
          `SELECT p.lexeme FROM chunk_postings p WHERE p.namespace = $1 AND p.label ORDER BY 1`,
          [ns],
        )
      ).rows.map((r) => r.lexeme);
    await replaceChunks(db, ns, 'n', [
      { ...chunk(0, 'Harbour pilots guide the tanker'), title: 'Harbour pilots', heading: 'Tankers' },
    ]);
    // Title and heading lexemes that the text holds; "guide" is in the text only.
    expect(await flagged()).toEqual(['harbour', 'pilot', 'tanker']);
    await updateChunks(db, `title = 'Guide'`, 'c.namespace = $1', [ns]); // same tsvector
    expect(await flagged()).toEqual(['guid', 'tanker']);
    await updateChunks(db, `search_text = 'Guide of pilots'`, 'c.namespace = $1', [ns]);
    expect(await flagged()).toEqual(['guid']);
    await updateChunks(db, 'heading = NULL, title = NULL', 'c.namespace = $1', [ns]);
    expect(await flagged()).toEqual([]);
    // A reindex into another configuration: the label is analysed in the new one.
    await updateChunks(db, `title = 'Pilots', ts_config = 'simple'::regconfig`, 'c.namespace = $1', [ns]);
    expect(await flagged()).toEqual(['pilots']);
  });

  it('honours k1 and b', async () => {
    const query = 'lake kids';
    const docs = await Promise.all(TEXTS.map((t) => lexemes(db, 'english', t)));
    const q = new Set((await lexemes(db, 'english', query)).keys());
    for (const [k1, b] of [
      [0.5, 0],
      [2, 1],
    ] as const) {
      const n = docs.length;
      const lengths = docs.map((d) => [...d.values()].reduce((a, c) => a + c, 0));
      const avgdl = lengths.reduce((a, c) => a + c, 0) / n;
      const expected = docs.map((d, i) => {
        let s = 0;
        for (const term of q) {
          const tf = d.get(term);
          if (!tf) continue;
          const df = docs.filter((x) => x.has(term)).length;
          s +=
            (Math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * (k1 + 1)) /
            (tf + k1 * (1 - b + (b * lengths[i]!) / avgdl));
        }
        return s;
      });
      const got = await rank('bm', query, { k1, b });
      expect(got[0]!.score).toBeCloseTo(Math.max(...expected), 9);
    }
  });

  it('never raises on hostile query text and finds what the words say', async () => {
    const hostile = [
      `"support group" & | ! <-> :* ( ) ' '' \\ %_ --`,
      `caroline' OR 1=1; DROP TABLE chunks; --`,
      '🙂🙂 support 🏳️‍🌈 group 日本語',
      'a:* & !b | (c <-> d)',
      '!!!',
      '',
      '   ',
      `${'support group '.repeat(800)}`, // ~11 KB
      'x'.repeat(10_000),
    ];
    for (const query of hostile) {
      const got = await rank('bm', query, { limit: 5 });
      expect(Array.isArray(got)).toBe(true);
    }
    const [top] = await rank('bm', hostile[0]!, { limit: 5 });
    expect(top).toBeDefined();
  });

  it('scores only the rarest maxTerms lexemes of a long query', async () => {
    const query = 'the group support caroline melanie lake kids e1234';
    const all = await rank('bm', query);
    const one = await rank('bm', query, { maxTerms: 1 });
    expect(all.length).toBeGreaterThan(1);
    // e1234 occurs once: the rarest lexeme alone finds one chunk.
    expect(one).toHaveLength(1);
  });

  it('keeps postings and statistics equal to a recount through rewrites and deletes', async () => {
    const recount = async (ns: string) => {
      const stats = await db.query<{ docs: number; len: number }>(
        `SELECT doc_count AS docs, total_len AS len FROM lexical_stats WHERE namespace = $1`,
        [ns],
      );
      const truth = await db.query<{ docs: number; len: number }>(
        `SELECT count(*)::int AS docs, coalesce(sum(l.tf), 0)::int AS len FROM (
           SELECT c.chunk_id, sum(coalesce(array_length(x.positions, 1), 1)) AS tf
           FROM chunks c, unnest(c.tsv) x WHERE c.namespace = $1 GROUP BY c.chunk_id) l`,
        [ns],
      );
      const postings = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunk_postings p WHERE p.namespace = $1 AND NOT EXISTS (
           SELECT 1 FROM chunks c, unnest(c.tsv) x WHERE c.namespace = p.namespace AND c.chunk_id = p.chunk_id
             AND x.lexeme = p.lexeme AND coalesce(array_length(x.positions, 1), 1) = p.tf)`,
        [ns],
      );
      const expectedPostings = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunks c, unnest(c.tsv) x WHERE c.namespace = $1`,
        [ns],
      );
      const actualPostings = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunk_postings WHERE namespace = $1`,
        [ns],
      );
      return {
        stats: { docs: Number(stats.rows[0]?.docs ?? 0), len: Number(stats.rows[0]?.len ?? 0) },
        truth: { docs: Number(truth.rows[0]!.docs), len: Number(truth.rows[0]!.len) },
        stray: Number(postings.rows[0]!.n),
        postings: [Number(actualPostings.rows[0]!.n), Number(expectedPostings.rows[0]!.n)],
      };
    };
    const ns = 'churn';
    await replaceChunks(db, ns, 'a', [chunk(0, 'alpha beta gamma'), chunk(1, 'beta beta delta')]);
    await replaceChunks(db, ns, 'b', [chunk(0, 'gamma epsilon')]);
    await replaceChunks(db, ns, 'a', [chunk(0, 'zeta eta theta iota')]); // rewrite
    await updateChunks(db, `search_text = 'epsilon epsilon kappa'`, `c.namespace = $1 AND c.node_key = 'b'`, [
      ns,
    ]);
    await updateChunks(db, `meta = '{"x":1}'`, 'c.namespace = $1', [ns]); // no text change
    let r = await recount(ns);
    expect(r.stats).toEqual(r.truth);
    expect(r.stray).toBe(0);
    expect(r.postings[0]).toBe(r.postings[1]);
    await deleteChunks(db, `c.namespace = $1 AND c.node_key = 'a'`, [ns]);
    r = await recount(ns);
    expect(r.stats).toEqual(r.truth);
    expect(r.postings[0]).toBe(r.postings[1]);
    // And the channel ranks with the updated text.
    const got = await rank(ns, 'kappa', { limit: 5 });
    expect(got).toHaveLength(1);
    expect(await rank(ns, 'zeta', { limit: 5 })).toEqual([]);
  });

  it("analyses the query in each chunk's text search configuration", async () => {
    await replaceChunks(db, 'plain', 'n', [
      chunk(0, 'they were running fast', 'simple'),
      chunk(1, 'a long run', 'simple'),
    ]);
    await replaceChunks(db, 'stemmed', 'n', [chunk(0, 'they were running fast'), chunk(1, 'a long run')]);
    const simple = await rank('plain', 'running', { limit: 5 });
    const english = await rank('stemmed', 'running', { limit: 5 });
    // `simple` keeps "running" as is (and "were" is no stop word there); english stems it to "run".
    expect(simple).toHaveLength(1);
    expect(english).toHaveLength(2);
  });

  it('keeps BM25 statistics per configuration, so a mixed namespace scores each language among its own', async () => {
    const ru = [
      'Гостевой пропуск оформляют по заявке',
      'Пропуска выдают на проходной',
      'Отпуск согласует руководитель',
    ];
    const en = [
      'Guest passes are issued at the front desk',
      'Vacation needs approval',
      'Laptops come from IT',
    ];
    await replaceChunks(
      db,
      'mixed',
      'ru',
      ru.map((t, i) => chunk(i, t, 'russian')),
    );
    await replaceChunks(
      db,
      'mixed',
      'en',
      en.map((t, i) => chunk(i, t)),
    );
    await replaceChunks(
      db,
      'only-ru',
      'ru',
      ru.map((t, i) => chunk(i, t, 'russian')),
    );
    const { rows } = await db.query<{ cfg: string; docs: number }>(
      `SELECT ts_config::text AS cfg, doc_count::int AS docs FROM lexical_stats WHERE namespace = 'mixed' ORDER BY 1`,
    );
    expect(rows).toEqual([
      { cfg: 'english', docs: 3 },
      { cfg: 'russian', docs: 3 },
    ]);
    const run = (ns: string, query: string) => rank(ns, query, { limit: 5 });
    const mixed = await run('mixed', 'как получить гостевые пропуска');
    const alone = await run('only-ru', 'как получить гостевые пропуска');
    // Same chunks, same scores: English chunks change neither df nor the average length.
    expect(mixed.map((c) => c.score)).toEqual(alone.map((c) => c.score));
    expect(mixed).toHaveLength(2);
    const english = await run('mixed', 'guest passes');
    expect(english).toHaveLength(1);
  });
});
