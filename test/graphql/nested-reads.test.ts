import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLORE_QUERY } from '../../bench/graph-bench.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { at, seedEntities, seedFacts, seedObservations } from '../helpers/seed-graph.js';

const NS = 'nested';
const SECRET = 'workspace:secret';

/**
 * The frontend read shapes cost a fixed, small number of SQL statements, whatever their
 * fan-out, and the compiled reads answer exactly what the per-level loaders answer (the
 * `node(id)` root still resolves through them), visibility and PII masking included.
 */
describe('nested frontend reads: statements per request', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'all', read: [NS], scopes: ['*'], pii: true },
      { id: 'public', read: [NS] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({
      MEMGATE_TOKENS_FILE: written.path,
      MEMGATE_MAX_COST: '1000000',
      MEMGATE_MAX_DEPTH: '20',
    });
    const b = Array.from({ length: 25 }, (_, i) => `b${String(i).padStart(2, '0')}`);
    const c = Array.from({ length: 12 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const d = Array.from({ length: 6 }, (_, i) => `d${i}`);
    await seedEntities(gw.db, NS, [
      { key: 'a0', kind: 'person', title: 'Ann, reach her at ann@example.com' },
      ...b.map((key, i) => ({ key, kind: 'project', visibility: i % 7 === 3 ? [SECRET] : [] })),
      ...c.map((key) => ({ key, kind: 'team', title: `${key} call +1 415 555 0144` })),
      ...d.map((key) => ({ key, kind: 'org' })),
    ]);
    const [obs] = await seedObservations(gw.db, NS, [
      {
        system: 'mail',
        externalId: 'm1',
        kind: 'email',
        occurredAt: at('2024-01-01T00:00:00Z'),
        mentions: ['a0'],
      },
    ]);
    const day = (i: number) => at(`2023-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z`);
    await seedFacts(gw.db, NS, [
      ...b.map((o, i) => ({
        subject: 'a0',
        predicate: 'works_on',
        object: o,
        validFrom: day(i),
        observationIds: [obs!],
      })),
      ...b.flatMap((s, i) =>
        c.map((o, j) => ({ subject: s, predicate: 'staffed_by', object: o, validFrom: day(i + j) })),
      ),
      ...c.flatMap((s, i) =>
        d.map((o, j) => ({ subject: s, predicate: 'part_of', object: o, validFrom: day(i + j) })),
      ),
      // A fact only the SECRET scope may see, between two public entities.
      { subject: 'a0', predicate: 'knows', object: 'c00', validFrom: day(30), visibility: [SECRET] },
    ]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const run = async (query: string, variables: Record<string, unknown>, token = tokens.all) => {
    const res = await gw.gql<Record<string, unknown>>(query, variables, { token });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    return { data: res.data!, statements: res.extensions!.sql!.statements };
  };

  it('entity by key: one statement', async () => {
    const r = await run('query($ns: String!) { entity(namespace: $ns, key: "a0") { id key kind title } }', {
      ns: NS,
    });
    expect(r.statements).toBe(1);
    expect(r.data.entity).toMatchObject({ key: 'a0', kind: 'person' });
  });

  it('a page of 20 with a cursor: one statement (no count unless totalCount is selected)', async () => {
    const page = `query($ns: String!, $after: String) {
      entities(namespace: $ns, first: 20, after: $after) {
        edges { cursor node { key kind title } } pageInfo { hasNextPage endCursor }
      }
    }`;
    const first = await run(page, { ns: NS });
    const end = (first.data.entities as { pageInfo: { endCursor: string } }).pageInfo.endCursor;
    const second = await run(page, { ns: NS, after: end });
    expect(second.statements).toBe(1);
    const counted = await run('query($ns: String!) { entities(namespace: $ns, first: 20) { totalCount } }', {
      ns: NS,
    });
    expect(counted.statements).toBe(2);
    expect(counted.data.entities).toEqual({ totalCount: 1 + 25 + 12 + 6 });
  });

  it('a page reads only the columns its fields need, and answers each field as a whole row does', async () => {
    const fields =
      'id namespace key kind title sourcePath confidence origin scopes lastSeen placeholder stale attributes';
    const page = (selection: string) =>
      `query($ns: String!) { entities(namespace: $ns, first: 50) { edges { node { ${selection} } } } }`;
    const nodes = async (selection: string, token = tokens.all) => {
      const r = await run(page(selection), { ns: NS }, token);
      return (r.data.entities as { edges: { node: Record<string, unknown> }[] }).edges.map((e) => e.node);
    };
    const whole = await nodes(fields);
    expect(whole).toHaveLength(1 + 25 + 12 + 6);
    for (const field of fields.split(' ')) {
      const alone = await nodes(`key ${field}`);
      expect(
        alone.map((n) => n[field]),
        field,
      ).toEqual(whole.map((n) => n[field]));
    }
    // A page of titles alone is still masked for a principal without pii.
    const masked = JSON.stringify(await nodes('title', tokens.public));
    expect(masked).not.toContain('ann@example.com');
    expect(JSON.stringify(whole)).toContain('ann@example.com');
  });

  const ENTITY_FACTS = `query($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) { key title
      facts(first: 20) { edges { cursor node { factId predicate validFrom
        subject { key title } object { key kind title }
      } } pageInfo { hasNextPage endCursor } }
    }
  }`;

  it('entity + 20 facts + each fact’s other endpoint: one statement', async () => {
    const r = await run(ENTITY_FACTS, { ns: NS, key: 'a0' });
    expect(r.statements).toBe(1);
    const facts = (r.data.entity as { facts: { edges: unknown[] } }).facts;
    expect(facts.edges).toHaveLength(20);
  });

  it('a 3-level walk (10 × 10 × 5, the bench’s explore query): two statements', async () => {
    const r = await run(EXPLORE_QUERY, { ns: NS, key: 'a0' });
    // The whole walk, then the first level's observations through their loader.
    expect(r.statements).toBe(2);
    const level1 = (
      r.data.entity as { facts: { edges: { node: { object: { facts: { edges: unknown[] } } } }[] } }
    ).facts.edges;
    expect(level1).toHaveLength(10);
    expect(level1[1]!.node.object.facts.edges).toHaveLength(10);
  });

  /** The same selection through `node(id)`, which resolves level by level through the loaders. */
  const viaLoaders = async (query: string, key: string, token: string) => {
    const id = await run('query($ns: String!, $key: String!) { entity(namespace: $ns, key: $key) { id } }', {
      ns: NS,
      key,
    });
    const selection = query.slice(query.indexOf('{', query.indexOf('entity(')) + 1, query.lastIndexOf('}'));
    const body = selection.slice(0, selection.lastIndexOf('}'));
    const nodeQuery = `query($id: ID!) { entity: node(id: $id) { ... on Entity { ${body} } } }`;
    return run(nodeQuery, { id: (id.data.entity as { id: string }).id }, token);
  };

  for (const [name, query] of [
    ['entity + facts + endpoints', ENTITY_FACTS],
    ['the 3-level walk', EXPLORE_QUERY],
  ] as const) {
    for (const who of ['all', 'public'] as const) {
      it(`${name} answers as the loaders do, for a principal ${who === 'all' ? 'with every scope and pii' : 'without the secret scope or pii'}`, async () => {
        const compiled = await run(query, { ns: NS, key: 'a0' }, tokens[who]);
        const loaded = await viaLoaders(query, 'a0', tokens[who]!);
        expect(loaded.statements).toBeGreaterThan(compiled.statements);
        expect(compiled.data).toEqual(loaded.data);
        const text = JSON.stringify(compiled.data);
        if (who === 'public') {
          expect(text).not.toContain('ann@example.com');
          expect(text).not.toContain('555 0144');
          expect(text).toContain('[email]');
          // The secret projects and the secret fact are not there, not even as placeholders.
          expect(text).not.toContain('"b03"');
          expect(text).not.toContain('"knows"');
        } else {
          expect(text).toContain('ann@example.com');
        }
      });
    }
  }

  it('one compiled statement serves a document under any variables, with or without page flags', async () => {
    const vars = '$n: Int!, $m: Int!, $p: [String!], $d: Direction!';
    const selection = (flags: string) => `key title
      facts(first: $n, direction: $d, predicates: $p) { edges { node { predicate subject { key }
        object { key title facts(first: $m, direction: OUT) { edges { node { predicate object { key } } } ${flags} } }
      } } ${flags} }`;
    const byKey = (flags: string) =>
      `query($ns: String!, $key: String!, ${vars}) { entity(namespace: $ns, key: $key) { ${selection(flags)} } }`;
    const byNode = (flags: string) =>
      `query($id: ID!, ${vars}) { entity: node(id: $id) { ... on Entity { ${selection(flags)} } } }`;
    type Walk = { entity: { facts: { edges: unknown[]; pageInfo?: { hasNextPage: boolean } } } };
    // Both endpoints joined, probed or read as the parent: OUT and IN join the far one.
    const cases = [
      { v: { key: 'a0', d: 'OUT', n: 10, m: 5, p: null }, all: 10, public: 10, more: true },
      { v: { key: 'a0', d: 'OUT', n: 3, m: 12, p: ['works_on'] }, all: 3, public: 3, more: true },
      { v: { key: 'c00', d: 'IN', n: 30, m: 2, p: null }, all: 26, public: 21, more: false },
      { v: { key: 'b01', d: 'BOTH', n: 12, m: 2, p: null }, all: 12, public: 12, more: true },
    ];
    for (const flags of ['', 'pageInfo { hasNextPage endCursor }']) {
      for (const { v, more, ...sizes } of cases) {
        for (const who of ['all', 'public'] as const) {
          const { key, ...rest } = v;
          const compiled = await run(byKey(flags), { ns: NS, ...v }, tokens[who]);
          expect(compiled.statements).toBe(1);
          const id = await run(
            'query($ns: String!, $key: String!) { entity(namespace: $ns, key: $key) { id } }',
            {
              ns: NS,
              key,
            },
          );
          const loaded = await run(
            byNode(flags),
            { id: (id.data.entity as { id: string }).id, ...rest },
            tokens[who],
          );
          expect(compiled.data).toEqual(loaded.data);
          const page = (compiled.data as Walk).entity.facts;
          expect(page.edges).toHaveLength(sizes[who]);
          if (flags) expect(page.pageInfo!.hasNextPage).toBe(more);
        }
      }
    }
  });

  it('pages facts with cursors inside a compiled read, forwards and backwards', async () => {
    const q = `query($ns: String!, $after: String, $before: String, $last: Int) {
      entity(namespace: $ns, key: "a0") {
        facts(first: 5, after: $after, before: $before, last: $last, direction: OUT, predicates: ["works_on"]) {
          edges { cursor node { object { key } } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        }
      }
    }`;
    type Facts = {
      entity: { facts: { edges: { node: { object: { key: string } } }[]; pageInfo: Record<string, string> } };
    };
    const keys = (d: Record<string, unknown>) =>
      (d as Facts).entity.facts.edges.map((e) => e.node.object.key);
    const p1 = await run(q, { ns: NS });
    const p2 = await run(q, { ns: NS, after: (p1.data as Facts).entity.facts.pageInfo.endCursor });
    expect(p2.statements).toBe(1);
    expect(keys(p2.data)).toHaveLength(5);
    expect(keys(p2.data).some((k) => keys(p1.data).includes(k))).toBe(false);
    const back = await run(q, {
      ns: NS,
      before: (p2.data as Facts).entity.facts.pageInfo.startCursor,
      last: 5,
    });
    expect(keys(back.data)).toEqual(keys(p1.data));
  });

  it('falls back to the loaders for what it does not compile, and reports argument errors at their path', async () => {
    const aliased = await run(
      `query($ns: String!) { entity(namespace: $ns, key: "a0") {
        out: facts(first: 2, direction: OUT) { edges { node { factId } } }
        into: facts(first: 2, direction: IN) { edges { node { factId } } }
        neighbors(limit: 3) { entity { key } }
      } }`,
      { ns: NS },
    );
    expect((aliased.data.entity as { out: { edges: unknown[] } }).out.edges).toHaveLength(2);
    const bad = await gw.gql(
      `query($ns: String!) { entity(namespace: $ns, key: "a0") { facts(first: 500) { edges { node { factId } } } } }`,
      { ns: NS },
      { token: tokens.all },
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
    expect(bad.errors?.[0]?.path).toEqual(['entity', 'facts']);
  });
});
