import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

/** GET /admin/backup: who may stream a backup of the whole database from a running gateway. */
describe('the backup endpoint', () => {
  const tokens = writeTokensFile([
    { id: 'owner', read: ['*'], write: ['*'], scopes: ['*'], pii: true, admin: true },
    { id: 'team-admin', read: ['acme'], write: ['acme'], scopes: ['*'], pii: true, admin: true },
    { id: 'no-pii-admin', read: ['*'], scopes: ['*'], admin: true },
    { id: 'agent', read: ['*'], write: ['*'], scopes: ['*'], pii: true },
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'memgate-backup-endpoint-'));
  let gw: TestGateway;
  let base: string;

  beforeAll(async () => {
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: tokens.path });
    base = gw.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(tokens.dir, { recursive: true, force: true });
  });

  const get = (token?: string, method = 'GET') =>
    fetch(`${base}/admin/backup`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('answers 401 without a valid token', async () => {
    for (const res of [await get(), await get('not-a-real-token-at-all')]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect((await res.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('answers 403 to principals that could not read everything', async () => {
    for (const id of ['team-admin', 'no-pii-admin', 'agent']) {
      const res = await get(tokens.tokens[id]);
      expect(res.status, id).toBe(403);
      expect((await res.json()).errors[0].extensions.code).toBe('FORBIDDEN');
    }
  });

  it('streams pg_dump to an admin with every right, and audits it', async () => {
    const file = join(dir, 'backup.sql');
    const result = await cli(['backup', '--out', file, '--url', base], {
      MEMGATE_TOKEN: tokens.tokens.owner!,
    });
    expect(result.code, result.stderr).toBe(0);
    const dump = readFileSync(file, 'utf8');
    expect(dump).toContain('CREATE TABLE public.facts');
    expect(dump).toContain('PostgreSQL database dump complete');
    const trail = await gw.gql<{
      auditTrail: { edges: { node: { action: string; principalId: string } }[] };
    }>(
      '{ auditTrail(namespace: "_system") { edges { node { action principalId } } } }',
      {},
      { token: tokens.tokens.owner },
    );
    expect(trail.data?.auditTrail.edges.map((e) => e.node)).toContainEqual({
      action: 'backup',
      principalId: 'owner',
    });
  });

  it('the CLI reports a refusal with its code and writes no file', async () => {
    const file = join(dir, 'refused.sql');
    const result = await cli(['backup', '--out', file, '--url', base], {
      MEMGATE_TOKEN: tokens.tokens.agent!,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/HTTP 403 FORBIDDEN/);
    expect(() => readFileSync(file)).toThrow();
    expect(() => readFileSync(`${file}.partial`)).toThrow();
  });

  it('refuses other methods', async () => {
    const res = await get(tokens.tokens.owner, 'POST');
    expect(res.status).toBe(405);
  });
});
