import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/auth/principal.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { SERVICES_PACK } from './domain-pack-fixture.js';

const REGISTER = /* GraphQL */ `
  mutation Register($pack: JSON!) { registerDomainPack(pack: $pack) }
`;
const CONFIGURE = /* GraphQL */ `
  mutation Configure($ns: String!, $packs: [String!]!, $strict: Boolean!) {
    configureNamespace(namespace: $ns, packs: $packs, strict: $strict)
  }
`;
const UPSERT = /* GraphQL */ `
  mutation Upsert($ns: String!, $entities: [EntityInput!]!) {
    upsertEntities(namespace: $ns, entities: $entities) { accepted rejected results { index status key code message } }
  }
`;
const ASSERT = /* GraphQL */ `
  mutation Assert($ns: String!, $facts: [FactInput!]!) {
    assertFacts(namespace: $ns, facts: $facts) { accepted rejected results { index status key code message } }
  }
`;
const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $observations: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $observations) { accepted rejected results { index status message } }
  }
`;

interface Payload {
  accepted: number;
  rejected: number;
  results: {
    index: number;
    status: string;
    key: string | null;
    code: string | null;
    message: string | null;
  }[];
}

const WRITER: Principal = { id: 'writer', read: ['*'], write: ['*'], scopes: null, pii: false, admin: false };

describe('domain packs and strict namespaces over HTTP', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(
      {},
      {
        authenticate: (req) => (req.headers.get('x-test-principal') === 'writer' ? WRITER : LOCAL_PRINCIPAL),
      },
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  const upsert = async (ns: string, entities: unknown[]) => {
    const res = await gw.gql<{ upsertEntities: Payload }>(UPSERT, { ns, entities });
    expect(res.errors).toBeUndefined();
    return res.data!.upsertEntities;
  };
  const assertFacts = async (ns: string, facts: unknown[]) => {
    const res = await gw.gql<{ assertFacts: Payload }>(ASSERT, { ns, facts });
    expect(res.errors).toBeUndefined();
    return res.data!.assertFacts;
  };

  it('registers a pack once; the same body again is a no-op, written with defaults spelled out too', async () => {
    const first = await gw.gql<{ registerDomainPack: Record<string, unknown> }>(REGISTER, {
      pack: SERVICES_PACK,
    });
    expect(first.errors).toBeUndefined();
    expect(first.data!.registerDomainPack).toMatchObject({
      status: 'CREATED',
      ref: 'services@1.0.0',
      kinds: ['service', 'endpoint', 'team', 'ticket'],
      relations: ['exposes', 'calls', 'owned_by', 'mentions'],
    });
    const spelledOut = {
      ...SERVICES_PACK,
      relations: SERVICES_PACK.relations.map((r) => ({ temporal: true, cardinality: 'many', ...r })),
    };
    const again = await gw.gql<{ registerDomainPack: Record<string, unknown> }>(REGISTER, {
      pack: spelledOut,
    });
    expect(again.errors).toBeUndefined();
    expect(again.data!.registerDomainPack).toMatchObject({
      status: 'UNCHANGED',
      bodyHash: first.data!.registerDomainPack.bodyHash,
    });
    const audit = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_log WHERE namespace = '_system' AND action = 'domainPack.register' AND target = 'services@1.0.0'`,
    );
    expect(audit.rows[0]!.n).toBe(1);
  });

  it('a version is immutable: another body under the same version is a CONFLICT', async () => {
    const changed = { ...SERVICES_PACK, relations: SERVICES_PACK.relations.slice(1) };
    const res = await gw.gql(REGISTER, { pack: changed });
    expect(res.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(res.errors?.[0]?.message).toMatch(/services@1\.0\.0 is already registered with a different body/);
    const v2 = await gw.gql<{ registerDomainPack: { status: string } }>(REGISTER, {
      pack: { ...changed, version: '2.0.0' },
    });
    expect(v2.data?.registerDomainPack.status).toBe('CREATED');
  });

  it('reserves the pack name default', async () => {
    const res = await gw.gql(REGISTER, {
      pack: { name: 'default', version: '1', kinds: [{ kind: 'thing' }] },
    });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toMatch(/name: the pack name "default" is reserved/);
  });

  it('rejects an id pattern the linear-time engine cannot run, naming the pattern and the rule', async () => {
    const res = await gw.gql(REGISTER, {
      pack: { name: 'evil', version: '1', kinds: [{ kind: 'thing', idPatterns: ['^(a+)\\1$'] }] },
    });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toMatch(/kinds\.0\.idPatterns\.0: rejected \(backreference\)/);
    const oversized = await gw.gql(REGISTER, {
      pack: {
        name: 'evil',
        version: '1',
        kinds: [{ kind: 'thing', attributes: { properties: { x: { pattern: 'a{0,1000}a{0,1000}b' } } } }],
      },
    });
    expect(oversized.errors?.[0]?.message).toMatch(/kinds\.0\.attributes: .*instructions, at most 1000/);
    const listed = await gw.gql<{ domainPacks: { ref: string }[] }>(`{ domainPacks(name: "evil") }`);
    expect(listed.data?.domainPacks).toEqual([]);
  });

  it('only admins register packs (the registry is shared by every namespace)', async () => {
    const res = await gw.gql(
      REGISTER,
      { pack: { name: 'mine', version: '1' } },
      { headers: { 'x-test-principal': 'writer' } },
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('configures a namespace: unknown packs, two versions of one pack and clashing packs are refused', async () => {
    const missing = await gw.gql(CONFIGURE, { ns: 'strict-ns', packs: ['services@9'], strict: true });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const two = await gw.gql(CONFIGURE, {
      ns: 'strict-ns',
      packs: ['services@1.0.0', 'services@2.0.0'],
      strict: true,
    });
    expect(two.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await gw.gql(REGISTER, { pack: { name: 'clash', version: '1', kinds: [{ kind: 'team' }] } });
    const clash = await gw.gql(CONFIGURE, {
      ns: 'strict-ns',
      packs: ['services@1.0.0', 'clash@1'],
      strict: true,
    });
    expect(clash.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(clash.errors?.[0]?.message).toMatch(/both declare the kind "team"/);

    const ok = await gw.gql<{ configureNamespace: Record<string, unknown> }>(CONFIGURE, {
      ns: 'strict-ns',
      packs: ['services@1.0.0'],
      strict: true,
    });
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.configureNamespace).toMatchObject({
      status: 'CREATED',
      packs: ['services@1.0.0'],
      strict: true,
      kinds: ['endpoint', 'service', 'team', 'ticket'],
      relations: ['calls', 'exposes', 'mentions', 'owned_by'],
      warnings: [],
    });
    const same = await gw.gql<{ configureNamespace: { status: string } }>(CONFIGURE, {
      ns: 'strict-ns',
      packs: ['services@1.0.0'],
      strict: true,
    });
    expect(same.data!.configureNamespace.status).toBe('UNCHANGED');
    const audit = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_log WHERE namespace = 'strict-ns' AND action = 'namespace.configure'`,
    );
    expect(audit.rows[0]!.n).toBe(1);
    const settings = await gw.gql<{ namespaceSettings: Record<string, unknown> }>(
      `{ namespaceSettings(namespace: "strict-ns") }`,
    );
    expect(settings.data!.namespaceSettings).toMatchObject({ strict: true, packs: ['services@1.0.0'] });
  });

  it('strict mode rejects an unknown kind, a key outside the natural key and attributes outside the schema', async () => {
    const payload = await upsert('strict-ns', [
      {
        key: 'service:payments',
        kind: 'service',
        title: 'Payments',
        attributes: { tier: 'gold', port: 8443 },
      },
      { key: 'widget:1', kind: 'widget' },
      { key: 'payments-api', kind: 'service' },
      { key: 'service:ledger', kind: 'service', attributes: { tier: 'platinum', port: '80' } },
      { key: 'team-core', kind: 'team' },
      { key: 'team:core', kind: 'team', title: 'Core' },
      { key: 'service:billing', kind: 'svc', title: 'Billing via a kind synonym' },
      { key: 'doc-1', kind: 'document', title: 'Built-in kinds always pass' },
      { key: 'endpoint:payments:GET /runs', kind: 'endpoint' },
    ]);
    const byIndex = payload.results;
    expect(byIndex.map((r) => r.status)).toEqual([
      'CREATED',
      'REJECTED',
      'REJECTED',
      'REJECTED',
      'REJECTED',
      'CREATED',
      'CREATED',
      'CREATED',
      'REJECTED',
    ]);
    for (const i of [1, 2, 3, 4, 8]) expect(byIndex[i]!.code).toBe('SCHEMA_VIOLATION');
    expect(byIndex[1]!.message).toBe(
      'strict mode rule kind-declared: kind "widget" is not declared by the packs enabled in namespace "strict-ns" (strict mode; packs: services@1.0.0; built-in kinds: document, entity, fact, episode)',
    );
    expect(byIndex[2]!.message).toBe(
      'strict mode rule natural-key: key "payments-api" of kind "service" does not match its natural key template "service:{name}"',
    );
    expect(byIndex[3]!.message).toBe(
      'strict mode rule attributes-schema: attributes of kind "service" violate its schema (pack services@1.0.0): attributes/port must be integer, got string; attributes/tier must be one of "gold", "silver", "bronze"',
    );
    expect(byIndex[4]!.message).toBe(
      'strict mode rule natural-key: key "team-core" of kind "team" violates its natural key schema: (value) must match the pattern "^team:[a-z0-9-]+$"',
    );
    expect(byIndex[8]!.message).toBe(
      'strict mode rule attributes-schema: attributes of kind "endpoint" violate its schema (pack services@1.0.0): attributes/method is required',
    );
    // A patch is checked merged over what is stored: a later write need not repeat `method`.
    const ep = await upsert('strict-ns', [
      { key: 'endpoint:payments:GET /runs', kind: 'endpoint', attributes: { method: 'GET' } },
      { key: 'endpoint:payments:GET /runs', kind: 'endpoint', attributes: { operationId: 'listRuns' } },
      { key: 'endpoint:payments:GET /runs', kind: 'endpoint', attributes: { method: null } },
    ]);
    expect(ep.results.map((r) => r.status)).toEqual(['CREATED', 'UPDATED', 'REJECTED']);
    expect(ep.results[2]!.message).toMatch(/attributes\/method is required/);
  });

  it('strict mode rejects facts outside the relations, by rule, naming the kinds', async () => {
    const payload = await assertFacts('strict-ns', [
      { subject: 'service:payments', predicate: 'exposes', object: 'endpoint:payments:GET /runs' },
      { subject: 'team:core', predicate: 'exposes', object: 'endpoint:payments:GET /runs' },
      { subject: 'service:payments', predicate: 'exposes', object: 'team:core' },
      { subject: 'service:payments', predicate: 'depends_on', object: 'service:billing' },
      { subject: 'service:billing', predicate: 'exposes', object: 'endpoint:billing:POST /invoices' },
      { subject: 'doc-1', predicate: 'LINKS_TO', object: 'service:payments' },
    ]);
    expect(payload.results.map((r) => r.status)).toEqual([
      'CREATED',
      'REJECTED',
      'REJECTED',
      'REJECTED',
      'CREATED',
      'CREATED',
    ]);
    expect(payload.results[1]!.message).toBe(
      'strict mode rule relation-from-kinds: relation "exposes" (pack services@1.0.0) allows fromKinds [service], but the subject "team:core" is of kind "team"',
    );
    expect(payload.results[2]!.message).toBe(
      'strict mode rule relation-to-kinds: relation "exposes" (pack services@1.0.0) allows toKinds [endpoint], but the object "team:core" is of kind "team"',
    );
    expect(payload.results[3]!.message).toMatch(
      /^strict mode rule relation-declared: relation "depends_on" is not declared by the packs enabled in namespace "strict-ns"/,
    );
    const stored = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM facts WHERE namespace = 'strict-ns' AND predicate IN ('depends_on') OR (namespace = 'strict-ns' AND subject = 'team:core')`,
    );
    expect(stored.rows[0]!.n).toBe(0);
  });

  it('observation assertions go through the same checks, each rejected alone', async () => {
    const res = await gw.gql<{
      recordObservations: { results: { status: string; message: string | null }[] };
    }>(RECORD, {
      ns: 'strict-ns',
      observations: [
        {
          source: { system: 'tests', externalId: 'obs-strict-1' },
          kind: 'catalog.sync',
          occurredAt: '2026-01-01T00:00:00Z',
          assertions: [
            { entity: { key: 'service:search', kind: 'service' } },
            { entity: { key: 'gadget:1', kind: 'gadget' } },
            { fact: { subject: 'service:search', predicate: 'owned_by', object: 'team:core' } },
            { fact: { subject: 'team:core', predicate: 'owned_by', object: 'service:search' } },
          ],
        },
      ],
    });
    expect(res.errors).toBeUndefined();
    const result = res.data!.recordObservations.results[0]!;
    expect(result.message).toMatch(/kind-declared/);
    expect(result.message).toMatch(/relation-from-kinds/);
    const kinds = await gw.db.query<{ key: string }>(
      `SELECT key FROM entities WHERE namespace = 'strict-ns' AND key IN ('service:search', 'gadget:1') ORDER BY key`,
    );
    expect(kinds.rows.map((r) => r.key)).toEqual(['service:search']);
  });

  it('cardinality one feeds the conflict rule', async () => {
    await upsert('strict-ns', [{ key: 'team:edge', kind: 'team' }]);
    const payload = await assertFacts('strict-ns', [
      {
        subject: 'service:payments',
        predicate: 'owned_by',
        object: 'team:core',
        validFrom: '2026-01-01T00:00:00Z',
      },
      {
        subject: 'service:payments',
        predicate: 'owned_by',
        object: 'team:edge',
        validFrom: '2026-02-01T00:00:00Z',
      },
      {
        subject: 'service:payments',
        predicate: 'calls',
        object: 'endpoint:payments:GET /runs',
        validFrom: '2026-01-01T00:00:00Z',
      },
      {
        subject: 'service:payments',
        predicate: 'calls',
        object: 'endpoint:billing:POST /invoices',
        validFrom: '2026-02-01T00:00:00Z',
      },
    ]);
    expect(payload.results.map((r) => r.status)).toEqual(['CREATED', 'CREATED', 'CREATED', 'CREATED']);
    const rows = await gw.db.query<{ predicate: string; conflict: boolean }>(
      `SELECT predicate, conflict FROM facts WHERE namespace = 'strict-ns' AND subject = 'service:payments'
         AND predicate IN ('owned_by', 'calls') ORDER BY predicate, valid_from`,
    );
    expect(rows.rows).toEqual([
      { predicate: 'calls', conflict: false },
      { predicate: 'calls', conflict: false },
      { predicate: 'owned_by', conflict: true },
      { predicate: 'owned_by', conflict: true },
    ]);
  });

  it('without strict mode unknown kinds are stored as free entities (packs enabled or not)', async () => {
    const lax = await gw.gql(CONFIGURE, { ns: 'lax-ns', packs: ['services@1.0.0'], strict: false });
    expect(lax.errors).toBeUndefined();
    for (const ns of ['lax-ns', 'plain-ns']) {
      const payload = await upsert(ns, [
        { key: 'widget:1', kind: 'widget', attributes: { anything: true } },
        { key: 'payments-api', kind: 'service', attributes: { tier: 'platinum' } },
      ]);
      expect(payload.results.map((r) => r.status)).toEqual(['CREATED', 'CREATED']);
      const facts = await assertFacts(ns, [
        { subject: 'widget:1', predicate: 'anything_goes', object: 'payments-api' },
      ]);
      expect(facts.results[0]!.status).toBe('CREATED');
    }
  });

  it('turning strict mode on applies to the next write in the same request', async () => {
    const res = await gw.gql<{ a: Payload; c: unknown; b: Payload }>(
      `mutation {
         a: upsertEntities(namespace: "flip-ns", entities: [{key: "x", kind: "gizmo"}]) { results { status } }
         c: configureNamespace(namespace: "flip-ns", packs: [], strict: true)
         b: upsertEntities(namespace: "flip-ns", entities: [{key: "y", kind: "gizmo"}]) { results { status code } }
       }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.a.results[0]!.status).toBe('CREATED');
    expect(res.data!.b.results[0]).toEqual({ status: 'REJECTED', code: 'SCHEMA_VIOLATION' });
  });
});
