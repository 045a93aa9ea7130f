import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MemgateClient, MemgateRequestError, createMemgateClient } from '../../client/index.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

const run = promisify(execFile);

/** Runs a TypeScript file as a user would (tsx; `memgate/client` resolved through package exports). */
async function runScript(file: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return stdout;
}

describe('typed client (client/): the journeys and the writes against a real gateway', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  let writer: MemgateClient;
  let reader: MemgateClient;
  const ns = 'crm';

  beforeAll(async () => {
    const written = writeTokensFile([
      {
        id: 'writer',
        read: ['crm', 'support', 'example'],
        write: ['crm', 'support', 'example'],
        scopes: ['*'],
      },
      { id: 'reader', read: ['crm'] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path });
    writer = createMemgateClient({ url: gw.url, token: tokens.writer });
    reader = createMemgateClient({ url: gw.url, token: tokens.reader });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('writes: entities, observations, facts, supersede, retract, documents, each answered per item', async () => {
    const entities = await writer.upsertEntities({
      namespace: ns,
      entities: [
        { key: 'initech', kind: 'company', title: 'Initech', attributes: { tier: 'gold' } },
        { key: 'peter', kind: 'person', title: 'Peter' },
      ],
    });
    expect(entities).toMatchObject({ accepted: 2, rejected: 0 });
    const observed = await writer.recordObservations({
      namespace: ns,
      observations: [
        {
          source: { system: 'crm', externalId: 'call-1' },
          kind: 'call',
          occurredAt: '2024-02-01T10:00:00Z',
          content: 'Peter from Initech confirmed the TPS report migration.',
        },
      ],
    });
    expect(observed.results[0]!.status).toBe('CREATED');
    const facts = await writer.assertFacts({
      namespace: ns,
      facts: [
        {
          subject: 'peter',
          predicate: 'works_at',
          object: 'initech',
          validFrom: '2024-01-01T00:00:00Z',
          observationIds: [observed.results[0]!.key!],
        },
        { subject: 'peter', predicate: 'reports_to', object: 'lumbergh', validFrom: '2024-01-01T00:00:00Z' },
      ],
    });
    expect(facts.accepted).toBe(2);
    const moved = await writer.supersedeFact({
      namespace: ns,
      factId: facts.results[1]!.key!,
      by: { subject: 'peter', predicate: 'reports_to', object: 'bob', validFrom: '2024-03-01T00:00:00Z' },
    });
    expect(moved.accepted).toBe(1);
    const retracted = await writer.retractFact({
      namespace: ns,
      factId: moved.results[0]!.key!,
      reason: 'typo',
    });
    expect(retracted.results[0]!.status).toBe('UPDATED');
    const docs = await writer.retainDocuments({
      namespace: ns,
      documents: [
        { key: 'doc:tps', title: 'TPS reports', content: '# TPS\n\nEvery TPS report needs a cover sheet.' },
      ],
    });
    expect(docs.results[0]!.status).toBe('CREATED');
  });

  it('explore: list, open an entity as of a time, neighbours, search', async () => {
    const page = await reader.entities({ namespace: ns, first: 10, kinds: ['company', 'person'] });
    expect(page.edges.map((e) => e.node.key).sort()).toEqual(['initech', 'peter']);
    const march = await reader.entity({ namespace: ns, key: 'peter', asOf: '2024-03-15T00:00:00Z' });
    // Typed results: the fact's object is an Entity with a key.
    const objects = march!.facts.edges.map((e) => `${e.node.predicate}:${e.node.object.key}`).sort();
    expect(objects).toEqual(['works_at:initech']);
    const february = await reader.entity({ namespace: ns, key: 'peter', asOf: '2024-02-15T00:00:00Z' });
    expect(february!.facts.edges.map((e) => e.node.object.key).sort()).toEqual(['initech', 'lumbergh']);
    const around = await reader.neighbors({ namespace: ns, key: 'peter', hops: 1 });
    expect(around!.neighbors.map((n) => n.entity.key)).toContain('initech');
    const found = await reader.search({ input: { namespaces: [ns], query: 'TPS report cover sheet' } });
    expect(found.hits[0]!.chunk.text).toContain('cover sheet');
  });

  it('context and provenance: a pack under budget, its trace, and the chain behind an item', async () => {
    const pack = await reader.context({
      input: { namespaces: [ns], query: 'Where does Peter work?', anchors: ['peter'], budgetTokens: 600 },
    });
    expect(pack.text).toContain('initech');
    expect(pack.tokenEstimate).toBeLessThanOrEqual(600);
    const trace = await reader.contextTrace({ namespace: ns, traceId: pack.traceId });
    expect(trace!.traceId).toBe(pack.traceId);
    const fact = pack.sections
      .flatMap((s) => s.items)
      .find((i) => i.kind === 'fact' && i.text.includes('works_at'));
    const trail = await reader.provenance({ id: fact!.id });
    expect(trail.steps.map((s) => s.kind)).toEqual(expect.arrayContaining(['fact', 'observation']));
    const source = await reader.source({ namespace: ns, key: 'doc:tps' });
    expect(source!.content).toContain('cover sheet');
  });

  it('errors throw MemgateRequestError with the gateway code', async () => {
    const refused = await reader
      .assertFacts({ namespace: ns, facts: [{ subject: 'a', predicate: 'b', object: 'c' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MemgateRequestError);
    expect((refused as MemgateRequestError).code).toBe('FORBIDDEN');
    const anonymous = createMemgateClient({ url: gw.url });
    await expect(anonymous.entity({ namespace: ns, key: 'peter' })).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      status: 401,
    });
  });

  it('runs the README snippet as written', async () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const snippet = /<!-- client-snippet -->\n```ts\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(snippet, 'README client snippet').toBeDefined();
    expect(snippet!.split('\n').length).toBeLessThanOrEqual(14);
    // Only the gateway's address differs from the README (a test port instead of 4000).
    const dir = join(process.cwd(), '.test-cache');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `readme-client-${process.pid}.ts`);
    writeFileSync(file, snippet!.replace('http://127.0.0.1:4000/graphql', gw.url));
    const out = await runScript(file, { MEMGATE_TOKEN: tokens.writer! });
    expect(out).toContain('pro');
    expect(out).toMatch(/acme —on_plan→ pro/);
  });

  it('runs examples/agent.ts', async () => {
    const out = await runScript(join(process.cwd(), 'examples', 'agent.ts'), {
      MEMGATE_URL: gw.url,
      MEMGATE_TOKEN: tokens.writer!,
    });
    expect(out).toContain('enterprise');
    expect(out).toMatch(/globex now: on_plan enterprise/);
    expect(out).toMatch(/globex as of 2024-03-01T00:00:00Z: on_plan starter/);
  });
});
