import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

/**
 * Patterns that take seconds per 4,096-character input on a backtracking engine. Each is either
 * refused at registration or evaluated by the linear-time engine: the write that checks it and
 * the read that extracts with it complete, and the gateway keeps answering /healthz meanwhile.
 */
const PATTERNS = [
  'a*a*c',
  '\\w*\\w*c',
  '[a-z]*[a-z0-9]*!',
  '.*.*x',
  'a*(?:a|b)*c',
  'a{0,4000}a{0,4000}b',
  '\\w*\\W*\\w*!',
  '[\\s\\S]*[\\s\\S]*!',
  '(a+)+$',
  '(a|ab)*c',
];

/** Near misses: long runs of what the patterns repeat, without what they end on. */
const NEAR_MISSES = [
  'a'.repeat(4096),
  'ab'.repeat(2048),
  'a1 '.repeat(1365),
  `${'a '.repeat(2047)}!!`.slice(0, 4096),
];

/** Generous: a backtracking engine needs minutes for this suite, the linear one well under a second. */
const GENEROUS_MS = 20_000;

const REGISTER = `mutation($p: JSON!) { registerDomainPack(pack: $p) }`;
const UPSERT = /* GraphQL */ `
  mutation($ns: String!, $entities: [EntityInput!]!) {
    upsertEntities(namespace: $ns, entities: $entities) { accepted rejected results { status code message } }
  }
`;
const TYPED = /* GraphQL */ `
  query($input: TypedContextInput!) { typedContext(input: $input) { unresolved warnings } }
`;

describe('user patterns: refused, or evaluated in linear time', () => {
  let gw: TestGateway;
  const healthz = () => gw.url.replace(/\/graphql$/, '/healthz');

  /** Runs `request` while asking /healthz; both must answer within the generous bound. */
  async function whileHealthy<T>(request: Promise<T>): Promise<T> {
    const health = fetch(healthz(), { signal: AbortSignal.timeout(GENEROUS_MS) });
    const [result, healthRes] = await Promise.all([request, health]);
    expect(healthRes.status).toBe(200);
    return result;
  }

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it.each(PATTERNS.map((p, i) => [p, i] as const))('%s', async (pattern, i) => {
    const name = `hostile-${i}`;
    const registered = await gw.gql<{ registerDomainPack: { status: string } }>(REGISTER, {
      p: {
        name,
        version: '1',
        kinds: [
          {
            kind: 'thing',
            idPatterns: [pattern],
            attributes: { type: 'object', properties: { code: { type: 'string', pattern } } },
          },
        ],
      },
    });
    if (registered.errors) {
      // Refused: a clear input error naming the rule, and nothing stored.
      expect(registered.errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(registered.errors[0]?.message).toMatch(/rejected \(size\)|unsafe or invalid pattern/);
      const listed = await gw.gql<{ domainPacks: unknown[] }>(`{ domainPacks(name: "${name}") }`);
      expect(listed.data?.domainPacks).toEqual([]);
      return;
    }
    expect(registered.data?.registerDomainPack.status).toBe('CREATED');
    const ns = `patterns-${i}`;
    const configured = await gw.gql(
      `mutation { configureNamespace(namespace: "${ns}", packs: ["${name}@1"], strict: true) }`,
    );
    expect(configured.errors).toBeUndefined();

    const entities = NEAR_MISSES.map((code, j) => ({ key: `t${j}`, kind: 'thing', attributes: { code } }));
    const upserted = await whileHealthy(
      gw.gql<{ upsertEntities: { accepted: number; rejected: number; results: { code: string | null }[] } }>(
        UPSERT,
        { ns, entities },
      ),
    );
    expect(upserted.errors).toBeUndefined();
    const payload = upserted.data!.upsertEntities;
    expect(payload.accepted + payload.rejected).toBe(entities.length);
    for (const r of payload.results) if (r.code) expect(r.code).toBe('SCHEMA_VIOLATION');

    const anchors = Array.from({ length: 50 }, (_, j) => ({
      kind: 'thing',
      value: NEAR_MISSES[j % NEAR_MISSES.length]!.slice(0, 1024),
    }));
    const typed = await whileHealthy(
      gw.gql<{ typedContext: { unresolved: number[]; warnings: string[] } }>(TYPED, {
        input: { namespaces: [ns], anchors, traverse: [] },
      }),
    );
    expect(typed.errors).toBeUndefined();
    expect(typed.data?.typedContext.unresolved.length).toBeLessThanOrEqual(50);
  });
});
