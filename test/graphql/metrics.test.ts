import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { unauthenticated } from '../../src/auth/authenticate.js';
import { disableMetrics } from '../../src/observability/metrics.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

// Caller text that must never become a label value.
const NS = 'tenant-secret-ns';
const KEYS = ['user-key-alpha', 'user-key-beta'];
const QUERY_TEXT = 'needle phrase from a caller';
const LONG_NAME = `Op${'x'.repeat(80)}`;

const WRITE = `mutation WriteDocs($ns: String!, $d: [DocumentInput!]!) {
  retainDocuments(namespace: $ns, documents: $d) { accepted results { status } }
}`;

/** Sample lines of one metric: labels → value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ labels, value: Number(m[2]) });
  }
  return out;
}

function sampleValue(text: string, name: string, labels: Record<string, string>): number {
  const hit = samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit?.value ?? 0;
}

describe('/metrics', () => {
  afterAll(() => disableMetrics());

  it('is on by default, and MEMGATE_METRICS=0 stops serving /metrics', async () => {
    const byDefault = await startTestGateway();
    try {
      const res = await fetch(byDefault.url.replace('/graphql', '/metrics'));
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('graphql_envelop_request');
    } finally {
      await byDefault.close();
    }
    const off = await startTestGateway({ MEMGATE_METRICS: '0' });
    try {
      const res = await fetch(off.url.replace('/graphql', '/metrics'));
      expect(res.status).toBe(404);
    } finally {
      await off.close();
    }
  });

  describe('with MEMGATE_METRICS=1 after a known set of requests', () => {
    let gw: TestGateway;
    let text: string;

    beforeAll(async () => {
      gw = await startTestGateway({ MEMGATE_METRICS: '1' });
      const docs = KEYS.map((key) => ({
        key,
        title: 'Notes',
        content: `# ${key}\n\nAlice owns the ${QUERY_TEXT} project.`,
      }));
      const first = await gw.gql(WRITE, { ns: NS, d: docs });
      expect(first.errors).toBeUndefined();
      await gw.gql(WRITE, { ns: NS, d: docs }); // the same documents again: UNCHANGED
      const search = await gw.gql(
        `query FindDocs($ns: String!, $q: String!) { search(input: { namespaces: [$ns], query: $q }) { hits { score } } }`,
        { ns: NS, q: QUERY_TEXT },
      );
      expect(search.errors).toBeUndefined();
      const pack = await gw.gql(
        `query Pack($ns: String!, $q: String!) { context(input: { namespaces: [$ns], query: $q, budgetTokens: 60 }) { text } }`,
        { ns: NS, q: QUERY_TEXT },
      );
      expect(pack.errors).toBeUndefined();
      // Errors: an unknown field (validation) and a namespace that fails zod at the edge.
      const invalid = await gw.gql(`query Broken { noSuchField }`);
      expect(invalid.errors?.[0]?.extensions?.code).toBeDefined();
      const bad = await gw.gql(
        `query BadNamespace($ns: String!) { entity(namespace: $ns, key: "k") { key } }`,
        {
          ns: `bad namespace ${QUERY_TEXT}`,
        },
      );
      expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      await gw.gql(`query ${LONG_NAME} { __typename }`);
      await gw.gql(`{ __typename }`);
      const res = await fetch(gw.url.replace('/graphql', '/metrics'));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      text = await res.text();
    });

    afterAll(() => gw.close());

    it('counts operations by type, name and root field', () => {
      const write = { operationType: 'mutation', operationName: 'WriteDocs', rootField: 'retainDocuments' };
      expect(sampleValue(text, 'graphql_envelop_request', write)).toBe(2);
      expect(sampleValue(text, 'graphql_envelop_request_duration_count', write)).toBe(2);
      expect(
        sampleValue(text, 'graphql_envelop_request', { operationName: 'FindDocs', rootField: 'search' }),
      ).toBe(1);
      expect(
        sampleValue(text, 'graphql_envelop_request', { operationName: 'Pack', rootField: 'context' }),
      ).toBe(1);
      expect(sampleValue(text, 'graphql_envelop_request', { operationName: 'anonymous' })).toBe(1);
      // A name that is not a short GraphQL name is folded into `other`.
      expect(sampleValue(text, 'graphql_envelop_request', { operationName: 'other' })).toBe(1);
      expect(
        sampleValue(text, 'graphql_yoga_http_duration_count', {
          operationName: 'WriteDocs',
          statusCode: '200',
        }),
      ).toBe(2);
    });

    it('counts errors by extensions.code', () => {
      expect(
        sampleValue(text, 'graphql_errors_total', { code: 'BAD_USER_INPUT', operationName: 'BadNamespace' }),
      ).toBe(1);
      const codes = samples(text, 'graphql_errors_total').map((s) => s.labels.code);
      expect(codes.length).toBeGreaterThanOrEqual(2);
      for (const code of codes) expect(code).toMatch(/^[A-Z_]+$/);
    });

    it('counts batch items by mutation and status', () => {
      const rows = { mutation: 'retainDocuments' };
      expect(sampleValue(text, 'memgate_ingest_rows_total', { ...rows, status: 'CREATED' })).toBe(2);
      expect(sampleValue(text, 'memgate_ingest_rows_total', { ...rows, status: 'UNCHANGED' })).toBe(2);
    });

    it('measures SQL by statement name and per request', () => {
      const statements = samples(text, 'memgate_sql_statement_duration_seconds_count');
      expect(statements.length).toBeGreaterThan(3);
      for (const s of statements) expect(s.labels.statement).toMatch(/^[A-Za-z_][A-Za-z0-9_.:-]*$/);
      expect(statements.map((s) => s.labels.statement)).toContain('lexicalChannel');
      // Every statement on these paths carries its /* queryName */ comment.
      expect(statements.map((s) => s.labels.statement)).not.toContain('unnamed');
      const perRequest = { operationType: 'query', rootField: 'search' };
      expect(sampleValue(text, 'memgate_request_sql_statements_count', perRequest)).toBe(1);
      expect(sampleValue(text, 'memgate_request_sql_statements_sum', perRequest)).toBeGreaterThan(0);
      expect(sampleValue(text, 'memgate_request_sql_seconds_count', perRequest)).toBe(1);
    });

    it('reports retrieval channels, compiler stages and the pack budget', () => {
      expect(
        sampleValue(text, 'memgate_retrieval_channel_duration_seconds_count', {
          pipeline: 'search',
          channel: 'lexical',
          status: 'ok',
        }),
      ).toBe(1);
      expect(
        sampleValue(text, 'memgate_retrieval_channel_duration_seconds_count', {
          pipeline: 'context',
          channel: 'lexical',
          status: 'ok',
        }),
      ).toBe(1);
      for (const stage of ['plan', 'query_channels', 'hydrate', 'score', 'pack', 'assemble', 'trace'])
        expect(sampleValue(text, 'memgate_context_stage_duration_seconds_count', { stage })).toBe(1);
      expect(sampleValue(text, 'memgate_context_tokens_used_count', {})).toBe(1);
      expect(sampleValue(text, 'memgate_context_tokens_used_sum', {})).toBeGreaterThan(0);
    });

    it('reports the database load and the process', async () => {
      if (gw.db.backend === 'pglite') {
        expect(samples(text, 'memgate_pglite_queue_depth')).toHaveLength(1);
        expect(sampleValue(text, 'memgate_pglite_queue_wait_seconds_count', {})).toBeGreaterThan(0);
      } else {
        // The pool closes idle clients after a while, so hold one busy while scraping.
        const busy = gw.db.query('SELECT pg_sleep(0.5)');
        const during = await (await fetch(gw.url.replace('/graphql', '/metrics'))).text();
        await busy;
        expect(sampleValue(during, 'memgate_db_pool_clients', { state: 'total' })).toBeGreaterThan(0);
        expect(
          samples(during, 'memgate_db_pool_clients')
            .map((s) => s.labels.state)
            .sort(),
        ).toEqual(['idle', 'total', 'waiting']);
      }
      expect(samples(text, 'process_cpu_user_seconds_total')).toHaveLength(1);
      expect(samples(text, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
    });

    it('puts no caller text in any label', () => {
      for (const needle of [NS, ...KEYS, QUERY_TEXT, 'needle', LONG_NAME, 'bad namespace', 'noSuchField'])
        expect(text).not.toContain(needle);
      // Every label value is a short name or a number.
      for (const line of text.split('\n')) {
        if (line.startsWith('#') || !line.includes('{')) continue;
        for (const pair of line.matchAll(/(\w+)="([^"]*)"/g))
          expect(pair[2]).toMatch(/^[A-Za-z0-9_.:+-]{0,64}$/);
      }
    });
  });

  describe('the background queues, read on scrape', () => {
    let gw: TestGateway;
    const scrape = async () => (await fetch(gw.url.replace('/graphql', '/metrics'))).text();

    beforeAll(async () => {
      gw = await startTestGateway();
    });
    afterAll(() => gw.close());

    it('reports extraction jobs by status and the oldest queued one, summed over namespaces', async () => {
      const empty = await scrape();
      expect(sampleValue(empty, 'memgate_extraction_queue_jobs', { status: 'queued' })).toBe(0);
      expect(
        samples(empty, 'memgate_extraction_queue_jobs')
          .map((s) => s.labels.status)
          .sort(),
      ).toEqual(['dead', 'queued', 'running']);
      expect(sampleValue(empty, 'memgate_extraction_queue_oldest_seconds', {})).toBe(0);
      // Two jobs queued a minute ago in two namespaces, one given up.
      await gw.db.query(
        `INSERT INTO extraction_jobs (namespace, job_id, source_kind, source_id, batch_key, status, created_at)
         VALUES ($1, 'j1', 'observation', 'o1', 'b', 'QUEUED', now() - interval '60 seconds'),
                ($2, 'j2', 'observation', 'o2', 'b', 'QUEUED', now() - interval '30 seconds'),
                ($2, 'j3', 'observation', 'o3', 'b', 'DEAD', now())`,
        [NS, `${NS}-2`],
      );
      const text = await scrape();
      expect(sampleValue(text, 'memgate_extraction_queue_jobs', { status: 'queued' })).toBe(2);
      expect(sampleValue(text, 'memgate_extraction_queue_jobs', { status: 'dead' })).toBe(1);
      expect(sampleValue(text, 'memgate_extraction_queue_oldest_seconds', {})).toBeGreaterThanOrEqual(59);
      expect(text).not.toContain(NS);
    });

    it('reports summary-refresh marks waiting and due, and the oldest mark', async () => {
      await gw.db.query(
        `INSERT INTO summary_refresh (namespace, entity_key, due_at, first_marked_at)
         VALUES ($1, 'a', now() - interval '1 second', now() - interval '20 seconds'),
                ($1, 'b', now() + interval '1 hour', now())`,
        [NS],
      );
      const text = await scrape();
      expect(sampleValue(text, 'memgate_summary_refresh_marked', { state: 'due' })).toBe(1);
      expect(sampleValue(text, 'memgate_summary_refresh_marked', { state: 'waiting' })).toBe(1);
      expect(sampleValue(text, 'memgate_summary_refresh_oldest_seconds', {})).toBeGreaterThanOrEqual(19);
    });
  });

  describe('with a tokens file', () => {
    const admin: Principal = { id: 'ops', read: [], write: [], scopes: [], pii: false, admin: true };
    const agent: Principal = {
      id: 'agent',
      read: ['*'],
      write: ['*'],
      scopes: null,
      pii: false,
      admin: false,
    };
    let gw: TestGateway;
    const scrape = (token?: string) =>
      fetch(gw.url.replace('/graphql', '/metrics'), {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });

    beforeAll(async () => {
      gw = await startTestGateway(
        { MEMGATE_METRICS: '1' },
        {
          authenticate: (req) => {
            const header = req.headers.get('authorization');
            if (header === 'Bearer admin-token') return admin;
            if (header === 'Bearer agent-token') return agent;
            throw unauthenticated('Invalid bearer token.');
          },
        },
      );
    });
    afterAll(() => gw.close());

    it('needs an admin bearer token', async () => {
      expect((await scrape()).status).toBe(401);
      expect((await scrape('agent-token')).status).toBe(403);
      const ok = await scrape('admin-token');
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('graphql_envelop_request');
    });
  });
});
