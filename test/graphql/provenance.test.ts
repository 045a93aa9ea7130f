import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { at, seedChunks, seedEntities, seedFacts, seedObservations } from '../helpers/seed-graph.js';

const NS = 'prov';

function principalFrom(request: Request): Principal {
  const scope = request.headers.get('x-principal');
  const read = request.headers.get('x-read');
  return {
    id: scope ?? 'local',
    read: read ? [read] : ['*'],
    write: [],
    scopes: scope ? [scope] : null,
    pii: true,
    admin: !scope,
  };
}

const PROVENANCE = /* GraphQL */ `
  query Provenance($id: ID!) {
    provenance(id: $id) {
      truncated
      steps {
        kind id label uri depth
        source { system stream externalId }
        metadata
        node { id __typename ... on Observation { observationId } ... on Fact { factId } }
      }
    }
  }
`;

type Step = {
  kind: string;
  id: string | null;
  label: string;
  uri: string | null;
  depth: number;
  source: { system: string; stream: string | null; externalId: string | null } | null;
  metadata: Record<string, unknown> | null;
  node: { id: string; __typename: string; observationId?: string; factId?: string } | null;
};

describe('provenance: from any item down to the events it rests on', () => {
  let gw: TestGateway;
  let obs: string[];
  let factIds: string[];
  let chunkIds: number[];

  beforeAll(async () => {
    gw = await startTestGateway({}, { authenticate: principalFrom });
    await seedEntities(gw.db, NS, [
      { key: 'alice', kind: 'person' },
      { key: 'apollo', kind: 'project' },
      {
        key: 'handbook',
        kind: 'document',
        title: 'Handbook',
        content: '# Passes\nGuests need a pass.',
        provenance: { repository: 'git@example.org:docs.git', path: 'handbook.md', commit: 'abc123' },
      },
    ]);
    obs = await seedObservations(gw.db, NS, [
      {
        system: 'tracker',
        stream: 'hr',
        externalId: 'evt-1',
        kind: 'assignment',
        occurredAt: at('2024-01-01T00:00:00Z'),
        provenance: { uri: 'https://tracker.example.org/events/evt-1' },
        mentions: ['alice'],
      },
      {
        system: 'mail',
        externalId: 'msg-7',
        kind: 'email',
        occurredAt: at('2024-02-01T00:00:00Z'),
        mentions: ['alice'],
      },
      {
        system: 'chat',
        externalId: 'secret-1',
        kind: 'message',
        occurredAt: at('2024-03-01T00:00:00Z'),
        visibility: ['workspace:hidden'],
      },
    ]);
    factIds = await seedFacts(gw.db, NS, [
      {
        subject: 'alice',
        predicate: 'works_on',
        object: 'apollo',
        validFrom: at('2024-01-01T00:00:00Z'),
        observationIds: [obs[0]!, obs[1]!, obs[2]!],
      },
    ]);
    chunkIds = await seedChunks(gw.db, NS, [
      { nodeKey: 'alice', order: 0, text: 'Alice was assigned to Apollo.', observationId: obs[0]! },
      { nodeKey: 'handbook', order: 0, title: 'Handbook', heading: 'Passes', text: 'Guests need a pass.' },
    ]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const walk = async (id: string, headers?: Record<string, string>) => {
    const res = await gw.gql<{ provenance: { truncated: boolean; steps: Step[] } }>(
      PROVENANCE,
      { id },
      { headers },
    );
    expect(res.errors).toBeUndefined();
    return { ...res.data!.provenance, statements: res.extensions?.sql?.statements };
  };

  it('walks a fact down to each observation, its source identity and URI, in order', async () => {
    const p = await walk(globalId('Fact', NS, factIds[0]!));
    expect(p.steps.map((s) => [s.depth, s.kind])).toEqual([
      [0, 'fact'],
      [1, 'observation'],
      [2, 'source'],
      [1, 'observation'],
      [2, 'source'],
      [1, 'observation'],
      [2, 'source'],
    ]);
    const [fact, o1, s1, o2, s2] = p.steps;
    expect(fact!.node).toMatchObject({ __typename: 'Fact', factId: factIds[0] });
    expect(fact!.label).toContain('alice —works_on→ apollo');
    expect(o1!.node).toMatchObject({ __typename: 'Observation', observationId: obs[0] });
    // The caller gave a URI: it is the source's address.
    expect(s1).toMatchObject({
      source: { system: 'tracker', stream: 'hr', externalId: 'evt-1' },
      uri: 'https://tracker.example.org/events/evt-1',
      metadata: { uri: 'https://tracker.example.org/events/evt-1' },
      label: 'tracker/hr#evt-1',
    });
    // None given: memgate's own address of the observation.
    expect(o2!.node).toMatchObject({ observationId: obs[1] });
    expect(s2).toMatchObject({
      source: { system: 'mail', stream: null, externalId: 'msg-7' },
      uri: `memgate://${NS}/observation/${obs[1]}`,
    });
    expect(p.truncated).toBe(false);
    // One statement for the fact, one for its observations.
    expect(p.statements).toBe(2);
  });

  it('leaves out evidence the principal may not see', async () => {
    const p = await walk(globalId('Fact', NS, factIds[0]!), { 'x-principal': 'workspace:other' });
    expect(p.steps.filter((s) => s.kind === 'observation').map((s) => s.node?.observationId)).toEqual([
      obs[0],
      obs[1],
    ]);
    expect(JSON.stringify(p)).not.toContain('secret-1');
  });

  it('walks a chunk to the observation its text came from', async () => {
    const p = await walk(globalId('Chunk', NS, chunkIds[0]!));
    expect(p.steps.map((s) => [s.depth, s.kind])).toEqual([
      [0, 'chunk'],
      [1, 'observation'],
      [2, 'source'],
    ]);
    expect(p.steps[0]!.node).toMatchObject({ __typename: 'Chunk' });
    expect(p.steps[2]!.source).toEqual({ system: 'tracker', stream: 'hr', externalId: 'evt-1' });
  });

  it('walks a document chunk to its document and the caller’s provenance metadata', async () => {
    const p = await walk(globalId('Chunk', NS, chunkIds[1]!));
    expect(p.steps.map((s) => [s.depth, s.kind])).toEqual([
      [0, 'chunk'],
      [1, 'entity'],
      [2, 'source'],
    ]);
    expect(p.steps[0]!.label).toBe('Handbook › Passes › #0');
    expect(p.steps[2]).toMatchObject({
      uri: `memgate://${NS}/source/handbook`,
      metadata: { repository: 'git@example.org:docs.git', path: 'handbook.md', commit: 'abc123' },
    });
    expect(p.steps[2]!.label).toContain('handbook.md');
  });

  it('walks an entity to the observations about it, and an observation to its source', async () => {
    const e = await walk(globalId('Entity', NS, 'alice'));
    expect(e.steps.map((s) => [s.depth, s.kind, s.node?.observationId ?? null])).toEqual([
      [0, 'entity', null],
      [1, 'observation', obs[1]],
      [2, 'source', null],
      [1, 'observation', obs[0]],
      [2, 'source', null],
    ]);
    const o = await walk(globalId('Observation', NS, obs[1]!));
    expect(o.steps.map((s) => [s.depth, s.kind])).toEqual([
      [0, 'observation'],
      [1, 'source'],
    ]);
  });

  it('answers ids it cannot walk with codes', async () => {
    const bad = await gw.gql(PROVENANCE, { id: 'not-an-id' });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const unsupported = await gw.gql(PROVENANCE, { id: globalId('Neighbor', NS, 'x') });
    expect(unsupported.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = await gw.gql(PROVENANCE, { id: globalId('Fact', NS, 'fact-000000000000000000000000') });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const hidden = await gw.gql(
      PROVENANCE,
      { id: globalId('Observation', NS, obs[2]!) },
      {
        headers: { 'x-principal': 'workspace:other' },
      },
    );
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const forbidden = await gw.gql(
      PROVENANCE,
      { id: globalId('Fact', NS, factIds[0]!) },
      {
        headers: { 'x-principal': 'workspace:other', 'x-read': 'elsewhere' },
      },
    );
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
