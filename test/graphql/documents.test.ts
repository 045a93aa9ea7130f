import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/auth/principal.js';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const RETAIN = /* GraphQL */ `
  mutation Retain($ns: String!, $docs: [DocumentInput!]!) {
    retainDocuments(namespace: $ns, documents: $docs) {
      accepted
      rejected
      results { index status id key code message }
    }
  }
`;

const SOURCE = /* GraphQL */ `
  query Source($ns: String!, $key: String!) {
    source(namespace: $ns, key: $key) {
      key title kind content contentSource chunkCount provenance meta pii piiCategories sourcePath
    }
  }
`;

interface Result {
  index: number;
  status: string;
  id: string | null;
  key: string | null;
  code: string | null;
  message: string | null;
}
interface RetainData {
  retainDocuments: { accepted: number; rejected: number; results: Result[] };
}
interface SourceData {
  source: {
    key: string;
    title: string;
    kind: string;
    content: string;
    contentSource: string;
    chunkCount: number;
    provenance: unknown;
    meta: unknown;
    pii: boolean;
    piiCategories: string[];
    sourcePath: string | null;
  } | null;
}

/** A long Markdown document: three sections, the second one long enough to need several chunks. */
function manual(version: string, paragraphs = 12): string {
  const body = Array.from(
    { length: paragraphs },
    (_, i) =>
      `Paragraph ${i} of the ${version} install guide explains step ${i} in enough words to take room. ` +
      `It mentions the flux capacitor calibration routine number ${i} and the widget alignment.`,
  ).join('\n\n');
  return `# Overview\n\nThe ${version} manual for the deployment tool.\n\n## Install\n\n${body}\n\n## Uninstall\n\nRemove the ${version} package.`;
}

// Requests may name a principal with a header, so visibility and PII masking can be tested.
const principals: Record<string, Principal> = {
  reader: { id: 'reader', read: ['*'], write: [], scopes: ['workspace:a'], pii: false, admin: false },
  auditor: { id: 'auditor', read: ['*'], write: [], scopes: null, pii: true, admin: false },
};

describe('documents: retainDocuments and source()', () => {
  let gw: TestGateway;
  const retain = async (ns: string, docs: unknown[]) => {
    const res = await gw.gql<RetainData>(RETAIN, { ns, docs });
    expect(res.errors).toBeUndefined();
    return res.data!.retainDocuments;
  };
  const source = async (ns: string, key: string, as?: string) => {
    const res = await gw.gql<SourceData>(
      SOURCE,
      { ns, key },
      as ? { headers: { 'x-test-principal': as } } : {},
    );
    expect(res.errors).toBeUndefined();
    return res.data!.source;
  };
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await gw.db.query<{ n: number }>(sql, params)).rows[0]!.n);

  beforeAll(async () => {
    gw = await startTestGateway(
      {},
      {
        authenticate: (request) =>
          principals[request.headers.get('x-test-principal') ?? ''] ?? LOCAL_PRINCIPAL,
      },
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('keeps the original text and provenance; source() returns them exactly', async () => {
    const content = `${manual('v1')}\n\n\`\`\`sh\n# not a heading\nnpm i  tool\n\`\`\`\n   trailing spaces   \n`;
    const provenance = { repository: 'git@example.org:acme/docs', commit: 'abc123', path: 'docs/manual.md' };
    const payload = await retain('docs', [
      {
        key: 'doc:manual',
        title: 'Deployment manual',
        content,
        sourcePath: 'docs/manual.md',
        meta: { lang: 'en', team: 'platform' },
        provenance,
      },
    ]);
    expect(payload).toMatchObject({
      accepted: 1,
      rejected: 0,
      results: [{ status: 'CREATED', key: 'doc:manual' }],
    });
    const doc = await source('docs', 'doc:manual');
    expect(doc).toMatchObject({
      key: 'doc:manual',
      title: 'Deployment manual',
      kind: 'document',
      content,
      contentSource: 'original',
      provenance,
      meta: { lang: 'en', team: 'platform' },
      pii: false,
      sourcePath: 'docs/manual.md',
    });
    expect(doc!.chunkCount).toBeGreaterThan(3);
    const chunks = await gw.db.query<{
      heading: string | null;
      search_text: string;
      meta: unknown;
      dims: number;
    }>(
      `SELECT heading, search_text, meta, vector_dims(embedding) AS dims FROM chunks
       WHERE namespace = 'docs' AND node_key = 'doc:manual' ORDER BY ord`,
    );
    expect(chunks.rows[0]).toMatchObject({
      heading: 'Overview',
      meta: { lang: 'en', team: 'platform' },
      dims: 64,
    });
    expect(chunks.rows[0]!.search_text).toMatch(/^Deployment manual\nOverview\nThe v1 manual/);
    expect(chunks.rows.some((c) => c.heading === 'Overview > Install')).toBe(true);
    expect(chunks.rows.every((c) => c.dims === 64)).toBe(true);
    expect(await source('docs', 'doc:nothing')).toBeNull();
    expect(await source('elsewhere', 'doc:manual')).toBeNull();
  });

  it('the same document again is UNCHANGED and writes nothing; a change is UPDATED', async () => {
    const doc = {
      key: 'doc:manual2',
      title: 'Manual 2',
      content: manual('v2'),
      meta: { lang: 'en' },
    };
    await retain('docs', [doc]);
    const before = await gw.db.query<{ chunk_id: number }>(
      `SELECT chunk_id FROM chunks WHERE namespace = 'docs' AND node_key = 'doc:manual2' ORDER BY ord`,
    );
    const again = await retain('docs', [doc]);
    expect(again.results[0]!.status).toBe('UNCHANGED');
    const after = await gw.db.query<{ chunk_id: number }>(
      `SELECT chunk_id FROM chunks WHERE namespace = 'docs' AND node_key = 'doc:manual2' ORDER BY ord`,
    );
    expect(after.rows).toEqual(before.rows);
    const metaChanged = await retain('docs', [{ ...doc, meta: { lang: 'de' } }]);
    expect(metaChanged.results[0]!.status).toBe('UPDATED');
    const contentChanged = await retain('docs', [{ ...doc, meta: { lang: 'de' }, content: manual('v3') }]);
    expect(contentChanged.results[0]!.status).toBe('UPDATED');
    expect((await source('docs', 'doc:manual2'))!.content).toBe(manual('v3'));
  });

  it('rewriting replaces the chunks atomically; BM25 postings and stats follow', async () => {
    const ns = 'rewrite';
    const chunkCount = () => count(`SELECT count(*)::int AS n FROM chunks WHERE namespace = $1`, [ns]);
    const postingsConsistent = async () => {
      // Postings must equal what the chunks' tsvectors say, and the stats their totals.
      const expected = await gw.db.query<{ postings: number; docs: number; len: number }>(
        `WITH lex AS (
           SELECT c.chunk_id, l.lexeme, coalesce(array_length(l.positions, 1), 1) AS tf
           FROM chunks c, unnest(c.tsv) l WHERE c.namespace = $1)
         SELECT (SELECT count(*)::int FROM lex) AS postings,
                (SELECT count(*)::int FROM chunks WHERE namespace = $1) AS docs,
                (SELECT coalesce(sum(tf), 0)::int FROM lex) AS len`,
        [ns],
      );
      const actual = await gw.db.query<{ postings: number; docs: number; len: number }>(
        `SELECT (SELECT count(*)::int FROM chunk_postings WHERE namespace = $1) AS postings,
                coalesce((SELECT doc_count::int FROM lexical_stats WHERE namespace = $1), 0) AS docs,
                coalesce((SELECT total_len::int FROM lexical_stats WHERE namespace = $1), 0) AS len`,
        [ns],
      );
      expect(actual.rows[0]).toEqual(expected.rows[0]);
      return actual.rows[0]!;
    };

    await retain(ns, [{ key: 'doc:long', title: 'Long', content: manual('long', 30) }]);
    const long = await chunkCount();
    expect(long).toBeGreaterThan(5);
    const stats1 = await postingsConsistent();
    expect(stats1.docs).toBe(long);

    const res = await retain(ns, [
      { key: 'doc:long', title: 'Long', content: '# Short\n\nOnly one small chunk.' },
    ]);
    expect(res.results[0]!.status).toBe('UPDATED');
    expect(await chunkCount()).toBe(1);
    expect((await postingsConsistent()).docs).toBe(1);

    // A rewrite that fails half-way leaves the previous version whole.
    await gw.db.exec(`
      CREATE OR REPLACE FUNCTION test_refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.text LIKE '%BOOM%' THEN RAISE EXCEPTION 'refused by test trigger'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_boom BEFORE INSERT ON chunks FOR EACH ROW EXECUTE FUNCTION test_refuse_boom();
    `);
    try {
      const failed = await retain(ns, [
        { key: 'doc:long', title: 'Long', content: manual('boom', 30).replace('step 20', 'BOOM') },
        { key: 'doc:other', title: 'Other', content: 'Another document.' },
      ]);
      expect(failed.results.map((r) => [r.status, r.code])).toEqual([
        ['REJECTED', 'INTERNAL'],
        ['CREATED', null],
      ]);
      expect(JSON.stringify(failed)).not.toMatch(/refused by test trigger/);
    } finally {
      await gw.db.exec(`DROP TRIGGER test_refuse_boom ON chunks; DROP FUNCTION test_refuse_boom();`);
    }
    const kept = await source(ns, 'doc:long');
    expect(kept).toMatchObject({ content: '# Short\n\nOnly one small chunk.', chunkCount: 1 });
    expect(await chunkCount()).toBe(2);
    await postingsConsistent();
  });

  it('links become LINKS_TO facts only to existing keys; missing ones are reported', async () => {
    const ns = 'links';
    const linkFacts = () =>
      gw.db.query<{ fact_id: string; object: string; open: boolean; evidence: string }>(
        `SELECT fact_id, object, valid_to IS NULL AS open, evidence FROM facts
         WHERE namespace = $1 AND subject = 'doc:a' AND predicate = 'LINKS_TO' ORDER BY object, valid_from`,
        [ns],
      );
    await gw.gql(
      `mutation { upsertEntities(namespace: "links", entities: [{ key: "person:bob", kind: "person" }]) { accepted } }`,
    );
    // doc:a links forward to doc:b, written later in the same batch.
    const first = await retain(ns, [
      {
        key: 'doc:a',
        title: 'A',
        content: 'Text of A.',
        links: ['doc:b', 'person:bob', 'doc:missing', 'doc:b'],
      },
      { key: 'doc:b', title: 'B', content: 'Text of B.' },
    ]);
    expect(first.results.map((r) => r.status)).toEqual(['CREATED', 'CREATED']);
    expect(first.results[0]!.message).toMatch(/doc:missing/);
    expect(first.results[0]!.message).not.toMatch(/doc:b|person:bob/);
    expect(first.results[1]!.message).toBeNull();
    const facts1 = await linkFacts();
    expect(facts1.rows.map((f) => [f.object, f.open, f.evidence])).toEqual([
      ['doc:b', true, 'ASSERTED'],
      ['person:bob', true, 'ASSERTED'],
    ]);
    expect(
      await count(`SELECT count(*)::int AS n FROM entities WHERE namespace = $1 AND key = 'doc:missing'`, [
        ns,
      ]),
    ).toBe(0);

    // The same document again adds no edge.
    const again = await retain(ns, [
      { key: 'doc:a', title: 'A', content: 'Text of A.', links: ['doc:b', 'person:bob', 'doc:missing'] },
    ]);
    expect(again.results[0]!.status).toBe('UNCHANGED');
    expect((await linkFacts()).rows).toEqual(facts1.rows);

    // Dropping a link closes its fact (history kept); a target that now exists is linked.
    await retain(ns, [{ key: 'doc:missing', title: 'Now here', content: 'Exists now.' }]);
    const changed = await retain(ns, [
      { key: 'doc:a', title: 'A', content: 'Text of A.', links: ['person:bob', 'doc:missing'] },
    ]);
    expect(changed.results[0]).toMatchObject({ status: 'UPDATED', message: null });
    const facts2 = await linkFacts();
    expect(facts2.rows.map((f) => [f.object, f.open])).toEqual([
      ['doc:b', false],
      ['doc:missing', true],
      ['person:bob', true],
    ]);
    expect(facts2.rows.find((f) => f.object === 'person:bob')!.fact_id).toBe(
      facts1.rows.find((f) => f.object === 'person:bob')!.fact_id,
    );
    const bobFact = facts2.rows.find((f) => f.object === 'person:bob')!.fact_id;
    const fact = await gw.gql<{
      node: {
        predicate: string;
        evidence: string;
        validTo: string | null;
        subject: { key: string };
        object: { key: string };
      };
    }>(
      `query($id: ID!) { node(id: $id) { ... on Fact { predicate evidence validTo subject { key } object { key } } } }`,
      { id: globalId('Fact', ns, bobFact) },
    );
    expect(fact.errors).toBeUndefined();
    expect(fact.data!.node).toEqual({
      predicate: 'LINKS_TO',
      evidence: 'ASSERTED',
      validTo: null,
      subject: { key: 'doc:a' },
      object: { key: 'person:bob' },
    });
  });

  it('a key listed more than once in a batch is written in order: each sees the one before', async () => {
    const ns = 'repeats';
    const res = await retain(ns, [
      { key: 'doc:r', title: 'R', content: 'First text.', links: ['doc:t1'] },
      { key: 'doc:t1', title: 'T1', content: 'Target one.' },
      { key: 'doc:r', title: 'R', content: 'First text.', links: ['doc:t1'] },
      { key: 'doc:t2', title: 'T2', content: 'Target two.' },
      { key: 'doc:r', title: 'R', content: 'Second text.', links: ['doc:t2'] },
    ]);
    expect(res.results.map((r) => r.status)).toEqual([
      'CREATED',
      'CREATED',
      'UNCHANGED',
      'CREATED',
      'UPDATED',
    ]);
    const links = await gw.db.query<{ object: string; open: boolean }>(
      `SELECT object, valid_to IS NULL AS open FROM facts
       WHERE namespace = $1 AND subject = 'doc:r' AND predicate = 'LINKS_TO' ORDER BY object`,
      [ns],
    );
    expect(links.rows).toEqual([
      { object: 'doc:t1', open: false },
      { object: 'doc:t2', open: true },
    ]);
    const source = await gw.gql<SourceData>(SOURCE, { ns, key: 'doc:r' });
    expect(source.data!.source!.content).toBe('Second text.');
    expect(source.data!.source!.chunkCount).toBe(1);
  });

  it('a batch with bad documents writes the good ones and says what was wrong', async () => {
    const res = await retain('batch', [
      { key: 'doc:1', title: 'One', content: 'First.' },
      { key: 'doc:2', title: 'Two', content: 'Second.', kind: 'Not A Kind' },
      {
        key: 'doc:3',
        title: 'Three',
        content: 'Third.',
        scopes: Array.from({ length: 21 }, (_, i) => `project:p${i}`),
      },
      { key: 'doc:4', title: 'Four', content: 'x'.repeat(5 * 1024 * 1024 + 1) },
      { key: 'doc:5', title: '  ', content: 'Untitled.' },
      { key: 'doc:6', title: 'Six', content: 'Sixth.', provenance: 'not an object' },
      { key: 'doc:7', title: 'Seven', content: 'Seventh.', kind: 'runbook', scopes: ['project:x'] },
    ]);
    expect(res.results.map((r) => [r.status, r.code])).toEqual([
      ['CREATED', null],
      ['REJECTED', 'BAD_USER_INPUT'],
      ['REJECTED', 'LIMIT_EXCEEDED'],
      ['REJECTED', 'LIMIT_EXCEEDED'],
      ['REJECTED', 'BAD_USER_INPUT'],
      ['REJECTED', 'BAD_USER_INPUT'],
      ['CREATED', null],
    ]);
    expect(res).toMatchObject({ accepted: 2, rejected: 5 });
    expect(res.results[1]!.message).toMatch(/kind/);
    expect(res.results[1]!.key).toBe('doc:2');
    expect(res.results[3]!.message).toMatch(/5242880/);
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE namespace = 'batch'`)).toBe(2);
    expect((await source('batch', 'doc:7'))!.kind).toBe('runbook');
  });

  it('flags personal data, masks it for principals without PII access, audits access for those with it', async () => {
    const content = '# Contacts\n\nWrite to jane.doe@example.com or call +44 20 7946 0958.';
    await retain('pii', [
      { key: 'doc:contacts', title: 'Contacts', content, provenance: { author: 'jane.doe@example.com' } },
      { key: 'doc:plain', title: 'Plain', content: 'Nothing personal here, build 2024-05-01 sha 3f9a1c2.' },
    ]);
    const local = await source('pii', 'doc:contacts');
    expect(local).toMatchObject({ pii: true, piiCategories: ['email', 'phone'], content });
    expect((await source('pii', 'doc:plain'))!.pii).toBe(false);
    const chunkPii = await gw.db.query<{ pii: boolean; pii_categories: string[] }>(
      `SELECT pii, pii_categories FROM chunks WHERE namespace = 'pii' AND node_key = 'doc:contacts'`,
    );
    expect(chunkPii.rows).toEqual([{ pii: true, pii_categories: ['email', 'phone'] }]);

    const masked = await source('pii', 'doc:contacts', 'reader');
    expect(masked!.content).toBe('# Contacts\n\nWrite to [email] or call [phone].');
    expect(masked!.provenance).toEqual({ author: '[email]' });

    const audits = () =>
      count(`SELECT count(*)::int AS n FROM audit_log WHERE namespace = 'pii' AND action = 'pii_access'`);
    expect(await audits()).toBe(0);
    expect((await source('pii', 'doc:contacts', 'auditor'))!.content).toBe(content);
    expect(await audits()).toBe(1);
  });

  it('hides documents outside the principal scopes and rewrites visibility instead of merging it', async () => {
    await retain('vis', [
      { key: 'doc:secret', title: 'Secret', content: 'For workspace b only.', scopes: ['workspace:b'] },
      {
        key: 'doc:shared',
        title: 'Shared',
        content: 'For workspace a.',
        scopes: ['workspace:a', 'project:x'],
      },
    ]);
    expect(await source('vis', 'doc:secret', 'reader')).toBeNull();
    expect((await source('vis', 'doc:shared', 'reader'))!.key).toBe('doc:shared');
    await retain('vis', [
      { key: 'doc:shared', title: 'Shared', content: 'For workspace a.', scopes: ['workspace:b'] },
    ]);
    expect(await source('vis', 'doc:shared', 'reader')).toBeNull();
  });

  it('stitches chunks back together when a node has no original text', async () => {
    await retain('stitch', [{ key: 'doc:s', title: 'S', content: manual('stitch', 20) }]);
    await gw.db.query(`UPDATE entities SET content = NULL WHERE namespace = 'stitch' AND key = 'doc:s'`);
    const doc = await source('stitch', 'doc:s');
    expect(doc!.contentSource).toBe('chunks');
    expect(doc!.content).toBe(manual('stitch', 20));
  });

  it('checks namespace names and write access', async () => {
    const bad = await gw.gql(RETAIN, { ns: 'no spaces', docs: [] });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const denied = await gw.gql(
      RETAIN,
      { ns: 'docs', docs: [{ key: 'k', title: 't', content: 'c' }] },
      {
        headers: { 'x-test-principal': 'reader' },
      },
    );
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
