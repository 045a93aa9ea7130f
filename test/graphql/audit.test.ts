import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

const NS = 'aud';

const TRAIL = /* GraphQL */ `
  query Trail($ns: String!, $since: DateTime, $until: DateTime, $actions: [String!], $first: Int, $after: String) {
    auditTrail(namespace: $ns, since: $since, until: $until, actions: $actions, first: $first, after: $after) {
      edges { cursor node { id namespace at principalId action target summary } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

interface Entry {
  id: string;
  namespace: string;
  at: string;
  principalId: string;
  action: string;
  target: string | null;
  summary: Record<string, unknown>;
}
interface Trail {
  auditTrail: {
    edges: { cursor: string; node: Entry }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

describe('the audit trail', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;

  const trail = async (variables: Record<string, unknown>, who = 'admin') => {
    const res = await gw.gql<Trail>(TRAIL, { ns: NS, ...variables }, { token: tokens[who] });
    return res;
  };

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'admin', read: ['*'], write: ['*'], admin: true },
      { id: 'admin-elsewhere', read: ['other'], admin: true },
      { id: 'agent', read: [NS], write: [NS], pii: true },
      { id: 'plain', read: [NS] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    const as = { token: tokens.agent };
    const write = await gw.gql(
      `mutation { upsertEntities(namespace: "${NS}", entities: [
          { key: "bob", kind: "person", title: "Bob", attributes: { mail: "bob@example.com" } },
          { key: "tmp", kind: "note", title: "Temporary" }]) { accepted } }`,
      {},
      as,
    );
    expect(write.data).toEqual({ upsertEntities: { accepted: 2 } });
    const obs = await gw.gql<{ recordObservations: { results: { key: string }[] } }>(
      `mutation { recordObservations(namespace: "${NS}", observations: [{ source: { system: "chat", externalId: "c1" },
          kind: "message", occurredAt: "2024-01-01T00:00:00Z", content: "secret plans" }]) { results { key } } }`,
      {},
      as,
    );
    const observationId = obs.data!.recordObservations.results[0]!.key;
    const redact = await gw.gql(
      `mutation R($id: String!) { redactObservation(namespace: "${NS}", observationId: $id, reason: "user request") { accepted } }`,
      { id: observationId },
      as,
    );
    expect(redact.errors).toBeUndefined();
    const purge = await gw.gql(
      `mutation { purgeEntity(namespace: "${NS}", key: "tmp", reason: "cleanup") { accepted } }`,
      {},
      as,
    );
    expect(purge.errors).toBeUndefined();
    const read = await gw.gql(`{ entity(namespace: "${NS}", key: "bob") { attributes } }`, {}, as);
    expect(JSON.stringify(read.data)).toContain('bob@example.com');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('is for admins that may read the namespace; everyone else gets FORBIDDEN', async () => {
    for (const who of ['plain', 'agent', 'admin-elsewhere']) {
      const res = await trail({}, who);
      expect(res.errors?.[0]?.extensions?.code, who).toBe('FORBIDDEN');
      expect(res.data ?? null, who).toBeNull();
      expect(res.extensions?.sql?.statements ?? 0, who).toBe(0);
    }
    const ok = await trail({});
    expect(ok.errors).toBeUndefined();
  });

  it('lists who did what, newest first: redaction, purge and PII access', async () => {
    const res = await trail({});
    const entries = res.data!.auditTrail.edges.map((e) => e.node);
    expect(entries.map((e) => e.action)).toEqual(['pii_access', 'purge_entity', 'redact_observation']);
    for (const e of entries) {
      expect(e).toMatchObject({ namespace: NS, principalId: 'agent' });
      expect(Number.isNaN(Date.parse(e.at))).toBe(false);
    }
    const ids = entries.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(entries[1]).toMatchObject({
      target: 'tmp',
      summary: expect.objectContaining({ reason: 'cleanup' }),
    });
    expect(entries[0]!.summary).toMatchObject({
      categories: ['email'],
      items: [expect.objectContaining({ id: 'bob' })],
    });
  });

  it('filters by actions and by the half-open window [since, until)', async () => {
    const purges = await trail({ actions: ['purge_entity'] });
    expect(purges.data!.auditTrail.edges.map((e) => e.node.action)).toEqual(['purge_entity']);
    const all = (await trail({})).data!.auditTrail.edges.map((e) => e.node);
    const oldest = all[all.length - 1]!;
    const from = await trail({ since: oldest.at });
    expect(from.data!.auditTrail.edges.map((e) => e.node.id)).toContain(oldest.id);
    const before = await trail({ until: oldest.at });
    expect(before.data!.auditTrail.edges.map((e) => e.node.id)).not.toContain(oldest.id);
    const future = await trail({ since: '2999-01-01T00:00:00Z' });
    expect(future.data!.auditTrail.edges).toEqual([]);
  });

  it('pages with opaque cursors', async () => {
    const all = (await trail({})).data!.auditTrail.edges.map((e) => e.node.id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page: Trail['auditTrail'] = (await trail({ first: 1, after })).data!.auditTrail;
      seen.push(...page.edges.map((e) => e.node.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(all);
  });

  it('answers bad arguments with codes', async () => {
    expect(
      (await trail({ since: '2024-02-01T00:00:00Z', until: '2024-01-01T00:00:00Z' })).errors?.[0]?.extensions
        ?.code,
    ).toBe('BAD_USER_INPUT');
    expect((await trail({ actions: ['drop table'] })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await trail({ first: 500 })).errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
    expect((await trail({ after: 'nope' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await trail({ since: 'yesterday' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('reads the shared registry log (_system) for admins only', async () => {
    const admin = await gw.gql(TRAIL, { ns: '_system' }, { token: tokens.admin });
    expect(admin.errors).toBeUndefined();
    const other = await gw.gql(TRAIL, { ns: '_system' }, { token: tokens.agent });
    expect(other.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('is append-only: no API edits or deletes it, and the database refuses to', async () => {
    const mutations = Object.keys(schema.getMutationType()!.getFields());
    expect(mutations.filter((m) => /audit/i.test(m))).toEqual([]);
    const count = async () =>
      Number((await gw.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log')).rows[0]!.n);
    const before = await count();
    await expect(gw.db.query(`UPDATE audit_log SET action = 'x'`)).rejects.toThrow(/append-only/);
    await expect(gw.db.query(`DELETE FROM audit_log`)).rejects.toThrow(/append-only/);
    await expect(gw.db.query(`TRUNCATE audit_log`)).rejects.toThrow(/append-only/);
    expect(await count()).toBe(before);
  });
});
