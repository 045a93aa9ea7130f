import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { assertBindAllowed, isLoopbackHost } from '../../src/auth/local-mode.js';
import { createTokenAuthenticator } from '../../src/auth/authenticate.js';
import { runTokenCommand } from '../../src/cli/token-command.js';
import { hashToken, readTokensFile } from '../../src/auth/tokens-file.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { serve } from '../../src/serve.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

const run = promisify(execFile);

const UPSERT = /* GraphQL */ `
  mutation Upsert($ns: String!, $entities: [EntityInput!]!) {
    upsertEntities(namespace: $ns, entities: $entities) { accepted results { status code } }
  }
`;
const ENTITY = /* GraphQL */ `
  query Entity($ns: String!, $key: String!) { entity(namespace: $ns, key: $key) { key title } }
`;

function tokenIo(env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { env, out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

describe('authentication with a tokens file', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  let file: string;

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'writer', read: ['support'], write: ['support', 'team-*'] },
      { id: 'reader', read: ['support', 'team-*'] },
      { id: 'outsider', read: ['elsewhere'] },
    ]);
    tokens = written.tokens;
    file = written.path;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: file });
    const seeded = await gw.gql(
      UPSERT,
      { ns: 'support', entities: [{ key: 'faq', kind: 'document', title: 'FAQ' }] },
      { token: tokens.writer },
    );
    expect(seeded.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });
  const base = () => gw.url.replace(/\/graphql$/, '');

  it('answers 401 UNAUTHENTICATED, GraphQL-shaped, without a token or with a bad one', async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-a-real-token-at-all' },
      { authorization: `Bearer ${tokens.reader}x` },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { authorization: tokens.reader! },
    ];
    for (const headers of variants) {
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          ...headers,
        },
        body: JSON.stringify({ query: ENTITY, variables: { ns: 'support', key: 'faq' } }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const body = (await res.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
      expect(body.data).toBeUndefined();
      expect(body.errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('tells an unauthenticated caller nothing about the schema', async () => {
    const res = await gw.gql('{ entitty(namespace: "support", key: "faq") { key } }');
    expect(res.status).toBe(401);
    expect(JSON.stringify(res)).not.toMatch(/Did you mean|entity/);
    const get = await fetch(`${gw.url}?query=${encodeURIComponent('{ __schema { types { name } } }')}`);
    expect(get.status).toBe(401);
  });

  it('serves /healthz and /readyz without a token', async () => {
    expect((await fetch(`${base()}/healthz`)).status).toBe(200);
    expect((await fetch(`${base()}/readyz`)).status).toBe(200);
  });

  it('lets a valid token read and write what its globs allow', async () => {
    const read = await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token: tokens.reader });
    expect(read.errors).toBeUndefined();
    expect(read.data).toEqual({ entity: { key: 'faq', title: 'FAQ' } });
    const globbed = await gw.gql(
      UPSERT,
      { ns: 'team-a', entities: [{ key: 'x', kind: 'note' }] },
      { token: tokens.writer },
    );
    expect(globbed.errors).toBeUndefined();
    const teamRead = await gw.gql(ENTITY, { ns: 'team-a', key: 'x' }, { token: tokens.reader });
    expect(teamRead.data).toEqual({ entity: { key: 'x', title: 'x' } });
  });

  it('answers FORBIDDEN outside the globs, for reads and writes', async () => {
    const denied = await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token: tokens.outsider });
    expect(denied.data).toEqual({ entity: null });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const write = await gw.gql(
      UPSERT,
      { ns: 'support', entities: [{ key: 'y', kind: 'note' }] },
      { token: tokens.reader },
    );
    expect(write.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // `team-*` does not match `team` nor `xteam-a`: globs are anchored.
    for (const ns of ['team', 'xteam-a']) {
      const res = await gw.gql(ENTITY, { ns, key: 'x' }, { token: tokens.reader });
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });

  it('does not tell existing from missing keys in a namespace one may not read', async () => {
    const existing = await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token: tokens.outsider });
    const missing = await gw.gql(ENTITY, { ns: 'support', key: 'no-such-key' }, { token: tokens.outsider });
    const emptyNs = await gw.gql(ENTITY, { ns: 'never-written', key: 'faq' }, { token: tokens.outsider });
    const strip = (r: typeof existing) => ({ data: r.data, errors: r.errors, status: r.status });
    expect(strip(existing)).toEqual(strip(missing));
    expect(existing.errors?.[0]?.message).toBe(missing.errors?.[0]?.message);
    expect(emptyNs.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // The refusal happens before any SQL runs, so it costs the same whatever exists.
    expect(existing.extensions?.sql?.statements).toBe(0);
    expect(missing.extensions?.sql?.statements).toBe(0);
    // In a namespace one may read, a missing key is simply null.
    const readable = await gw.gql(ENTITY, { ns: 'support', key: 'no-such-key' }, { token: tokens.reader });
    expect(readable.errors).toBeUndefined();
    expect(readable.data).toEqual({ entity: null });
  });

  it('`memgate token create` appends a principal whose token works at once; revoke ends it', async () => {
    const { io, out, err } = tokenIo({ MEMGATE_TOKENS_FILE: file });
    const code = runTokenCommand(
      [
        'create',
        '--id',
        'agent-new',
        '--read',
        'support',
        '--read',
        'team-*',
        '--scopes',
        'workspace:w1',
        '--pii',
      ],
      io,
    );
    expect(code).toBe(0);
    const token = out.join('').trim();
    expect(token).toMatch(/^mgt_[A-Za-z0-9_-]{43}$/);
    expect(err.join('')).toMatch(/shown once/);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(token);
    const entry = readTokensFile(file).principals.find((p) => p.id === 'agent-new');
    expect(entry).toEqual({
      id: 'agent-new',
      tokenSha256: hashToken(token),
      read: ['support', 'team-*'],
      write: [],
      scopes: ['workspace:w1'],
      pii: true,
      admin: false,
    });
    // The running gateway picks the change up (the file is re-checked at most once a second).
    await waitFor(
      async () => (await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token })).status === 200,
    );
    const ok = await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token });
    expect(ok.data).toEqual({ entity: { key: 'faq', title: 'FAQ' } });

    expect(runTokenCommand(['revoke', '--id', 'agent-new'], tokenIo({ MEMGATE_TOKENS_FILE: file }).io)).toBe(
      0,
    );
    await waitFor(
      async () => (await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token })).status === 401,
    );
    // The others are untouched.
    expect((await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token: tokens.reader })).status).toBe(200);
  });

  it('the examples in `memgate token --help` run, and the list and the repeated flag grant the same', () => {
    const help = tokenIo();
    expect(runTokenCommand(['--help'], help.io)).toBe(0);
    const examples = help.out
      .join('')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('memgate token create ') && !line.includes('<'));
    expect(examples).toHaveLength(2);
    const granted = examples.map((line) => {
      const scratch = join(mkdtempSync(join(tmpdir(), 'memgate-help-')), 'tokens.json');
      // The shell's word splitting: quotes group, and are removed.
      const args = [...line.slice('memgate token '.length).matchAll(/'([^']*)'|(\S+)/g)].map(
        (m) => m[1] ?? m[2]!,
      );
      const run = tokenIo({ MEMGATE_TOKENS_FILE: scratch });
      expect(runTokenCommand(args, run.io), `${line}: ${run.err.join('')}`).toBe(0);
      return readTokensFile(scratch).principals[0]!.read;
    });
    expect(granted).toEqual([
      ['support', 'team-*'],
      ['support', 'team-*'],
    ]);
  });

  it('refuses bad token commands with usage errors and keeps the file valid', async () => {
    const before = readFileSync(file, 'utf8');
    const cases: string[][] = [
      ['create', '--id', 'writer', '--read', 'support'], // duplicate id
      ['create', '--id', 'x1'], // no rights
      ['create', '--id', 'x2', '--read', 'bad ns'],
      ['create', '--id', 'x3', '--read', 'a', '--scopes', 'not-a-scope'],
      ['create', '--id', 'x4', '--read', 'a', '--bogus'],
      ['frobnicate'],
    ];
    for (const args of cases) {
      const { io } = tokenIo({ MEMGATE_TOKENS_FILE: file });
      expect(runTokenCommand(args, io)).toBeGreaterThan(0);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('keeps serving the last good principals when the file is broken by an edit', async () => {
    const before = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, '{"principals": [ broken');
      await new Promise((r) => setTimeout(r, 1200));
      const res = await gw.gql(ENTITY, { ns: 'support', key: 'faq' }, { token: tokens.reader });
      expect(res.status).toBe(200);
    } finally {
      writeFileSync(file, before);
    }
  });
});

describe('a deleted tokens file fails closed', () => {
  it('refuses every token until a valid file is back, and says so in the log', async () => {
    const { path, tokens } = writeTokensFile([{ id: 'reader', read: ['support'] }]);
    const lines: string[] = [];
    const authenticate = await createTokenAuthenticator(path, {
      reloadIntervalMs: 0,
      logger: createLogger('info', (l) => lines.push(l)),
    });
    const request = () =>
      new Request('http://x/graphql', { headers: { authorization: `Bearer ${tokens.reader}` } });
    expect((await authenticate(request())).id).toBe('reader');
    const before = readFileSync(path, 'utf8');
    unlinkSync(path);
    await expect(authenticate(request())).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    await expect(authenticate(request())).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    const gone = lines.filter((l) => l.includes('tokens file is gone'));
    expect(gone).toHaveLength(1); // once per disappearance, not once per request
    expect(JSON.parse(gone[0]!)).toMatchObject({ level: 'error', path });
    // A broken file in its place changes nothing: still nobody.
    writeFileSync(path, '{"principals": [ broken');
    await expect(authenticate(request())).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    writeFileSync(path, before);
    expect((await authenticate(request())).id).toBe('reader');
  });

  it('through HTTP: the gateway answers 401 while the file is missing', async () => {
    const { path, tokens } = writeTokensFile([{ id: 'reader', read: ['support'] }]);
    const gw = await startTestGateway({ MEMGATE_TOKENS_FILE: path });
    try {
      const before = readFileSync(path, 'utf8');
      expect((await gw.gql('{ __typename }', {}, { token: tokens.reader })).status).toBe(200);
      unlinkSync(path);
      await waitFor(
        async () => (await gw.gql('{ __typename }', {}, { token: tokens.reader })).status === 401,
      );
      writeFileSync(path, before);
      await waitFor(
        async () => (await gw.gql('{ __typename }', {}, { token: tokens.reader })).status === 200,
      );
    } finally {
      await gw.close();
    }
  });
});

describe('a restored tokens file', () => {
  it('is picked up within the reload interval even with the same size, an old mtime and the same inode', async () => {
    const original = writeTokensFile([{ id: 'reader', read: ['support'] }]);
    const restored = writeTokensFile([{ id: 'keeper', read: ['support'] }]);
    const backup = readFileSync(restored.path, 'utf8');
    const stamp = 1_700_000_000; // whole seconds: the restore below can repeat it exactly
    utimesSync(original.path, stamp, stamp);
    const gw = await startTestGateway({ MEMGATE_TOKENS_FILE: original.path });
    try {
      const status = async (token: string) => (await gw.gql('{ __typename }', {}, { token })).status;
      expect(await status(original.tokens.reader!)).toBe(200);
      const before = statSync(original.path);
      expect(Buffer.byteLength(backup)).toBe(before.size);
      // Restored in place from a copy that kept its times (cp -p, a backup tool).
      writeFileSync(original.path, backup);
      utimesSync(original.path, stamp, stamp);
      expect(statSync(original.path)).toMatchObject({
        ino: before.ino,
        size: before.size,
        mtimeMs: before.mtimeMs,
      });
      await waitFor(async () => (await status(restored.tokens.keeper!)) === 200);
      expect(await status(original.tokens.reader!)).toBe(401);
    } finally {
      await gw.close();
    }
  });
});

describe('the token command through the CLI', () => {
  it('prints the token once on stdout and stores only its hash', async () => {
    const { dir } = writeTokensFile([]);
    const path = join(dir, 'new.json');
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli.ts',
        'token',
        'create',
        '--id',
        'cli-agent',
        '--read',
        'support',
        '--admin',
      ],
      { env: { ...process.env, MEMGATE_TOKENS_FILE: path }, cwd: process.cwd() },
    );
    const token = stdout.trim();
    expect(token).toMatch(/^mgt_/);
    const file = readTokensFile(path);
    expect(file.principals).toEqual([
      expect.objectContaining({ id: 'cli-agent', tokenSha256: hashToken(token), admin: true }),
    ]);
    expect(readFileSync(path, 'utf8')).not.toContain(token);
  });
});

describe('start-up rules', () => {
  it('refuses a broken or invalid tokens file before serving anything', async () => {
    const { dir } = writeTokensFile([]);
    const cases: [string, RegExp][] = [
      ['not json', /not valid JSON/],
      [JSON.stringify({ principals: [{ id: 'a', tokenSha256: 'abc', read: ['x'] }] }), /tokenSha256/],
      [
        JSON.stringify({ principals: [{ id: 'a', tokenSha256: 'a'.repeat(64), read: ['x'], extra: 1 }] }),
        /extra|Unrecognized/i,
      ],
      [
        JSON.stringify({
          principals: [
            { id: 'a', tokenSha256: 'a'.repeat(64) },
            { id: 'a', tokenSha256: 'b'.repeat(64) },
          ],
        }),
        /duplicate id/,
      ],
    ];
    for (const [i, [text, message]] of cases.entries()) {
      const path = join(dir, `bad-${i}.json`);
      writeFileSync(path, text);
      await expect(
        createApp(parseConfig({ MEMGATE_TOKENS_FILE: path, MEMGATE_LOG_LEVEL: 'silent' }), {
          db: {} as never,
          embedder: {} as never,
        }),
      ).rejects.toThrow(message);
    }
    await expect(
      createApp(
        parseConfig({ MEMGATE_TOKENS_FILE: join(dir, 'missing.json'), MEMGATE_LOG_LEVEL: 'silent' }),
        {
          db: {} as never,
          embedder: {} as never,
        },
      ),
    ).rejects.toThrow(/cannot read tokens file/);
  });

  it('local mode binds loopback only; a tokens file allows any address', async () => {
    for (const host of ['127.0.0.1', '127.10.0.1', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host)).toBe(true);
      expect(() => assertBindAllowed({ host, tokensFile: undefined })).not.toThrow();
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com', '127.0.0.1.nip.io']) {
      expect(isLoopbackHost(host)).toBe(false);
      expect(() => assertBindAllowed({ host, tokensFile: undefined })).toThrow(/loopback/);
      expect(() => assertBindAllowed({ host, tokensFile: '/etc/memgate/tokens.json' })).not.toThrow();
    }
    // serve() refuses before opening a database or a port.
    await expect(
      serve(parseConfig({ MEMGATE_HOST: '0.0.0.0', MEMGATE_LOG_LEVEL: 'silent' })),
    ).rejects.toThrow(/Refusing to bind 0\.0\.0\.0 in local mode/);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
