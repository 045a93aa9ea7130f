import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $obs: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $obs) {
      accepted
      partial
      rejected
      results { index status id key code message assertions { index kind status code message } }
    }
  }
`;

const OBSERVATION = /* GraphQL */ `
  query Obs($id: ID!) {
    node(id: $id) {
      ... on Observation {
        observationId kind occurredAt recordedAt status statusReason sessionId content data
        source { system stream externalId }
        actor { type id }
      }
    }
  }
`;

const ENTITY = /* GraphQL */ `
  query Entity($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) { key kind title placeholder }
  }
`;

interface WriteResult {
  index: number;
  status: string;
  id: string | null;
  key: string | null;
  code: string | null;
  message: string | null;
  assertions:
    | { index: number; kind: string; status: string; code: string | null; message: string | null }[]
    | null;
}
interface Payload {
  accepted: number;
  partial: number;
  rejected: number;
  results: WriteResult[];
}

describe('recordObservations over HTTP', () => {
  let gw: TestGateway;
  const ns = 'obs-test';

  const record = async (obs: unknown[], namespace = ns): Promise<Payload> => {
    const res = await gw.gql<{ recordObservations: Payload }>(RECORD, { ns: namespace, obs });
    expect(res.errors).toBeUndefined();
    return res.data!.recordObservations;
  };
  const count = async (sql: string, params: unknown[] = [ns]): Promise<number> => {
    const { rows } = await gw.db.query<{ n: number }>(sql, params);
    return Number(rows[0]!.n);
  };
  const counts = async () => ({
    observations: await count('SELECT count(*) AS n FROM observations WHERE namespace = $1'),
    entities: await count('SELECT count(*) AS n FROM entities WHERE namespace = $1'),
    versions: await count('SELECT count(*) AS n FROM entity_versions WHERE namespace = $1'),
    facts: await count('SELECT count(*) AS n FROM facts WHERE namespace = $1'),
    chunks: await count('SELECT count(*) AS n FROM chunks WHERE namespace = $1'),
    mentions: await count('SELECT count(*) AS n FROM mentions WHERE namespace = $1'),
    postings: await count('SELECT count(*) AS n FROM chunk_postings WHERE namespace = $1'),
    confidence: await count('SELECT coalesce(sum(confidence), 0) AS n FROM facts WHERE namespace = $1'),
    observationIds: await count(
      'SELECT coalesce(sum(cardinality(observation_ids)), 0) AS n FROM facts WHERE namespace = $1',
    ),
  });

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  const turn = (n: number, text: string, extra: Record<string, unknown> = {}) => ({
    source: { system: 'chat', stream: 'conv-1', externalId: `turn-${n}` },
    kind: 'chat.message',
    occurredAt: `2024-05-0${n}T10:00:00+02:00`,
    actor: { type: 'person', id: 'Caroline' },
    content: text,
    ...extra,
  });

  it('records a batch: deterministic ids, distinct clocks, session from the stream, one bad item rejected alone', async () => {
    const payload = await record([
      turn(1, 'Caroline: I went to the LGBTQ support group yesterday.'),
      { ...turn(2, 'x'), kind: 'Not A Kind' },
      turn(3, 'Caroline: The adoption agency called back about the interview.'),
    ]);
    expect(payload.accepted).toBe(2);
    expect(payload.rejected).toBe(1);
    expect(payload.results.map((r) => r.status)).toEqual(['CREATED', 'REJECTED', 'CREATED']);
    expect(payload.results[1]!.code).toBe('INVALID_KIND');
    const first = payload.results[0]!;
    expect(first.key).toMatch(/^obs-[0-9a-f]{24}$/);
    expect(first.id).toBe(globalId('Observation', ns, first.key!));

    const res = await gw.gql<{ node: Record<string, unknown> }>(OBSERVATION, { id: first.id });
    expect(res.data!.node).toMatchObject({
      observationId: first.key,
      kind: 'chat.message',
      occurredAt: '2024-05-01T08:00:00.000Z',
      status: 'PROCESSED',
      sessionId: 'conv-1',
      source: { system: 'chat', stream: 'conv-1', externalId: 'turn-1' },
      actor: { type: 'person', id: 'Caroline' },
    });
    const recordedAt = Date.parse(res.data!.node.recordedAt as string);
    expect(Math.abs(recordedAt - Date.now())).toBeLessThan(60_000);
  });

  it('indexes the content as a chunk owned by a per-observation node, traceable back to the observation', async () => {
    const [r] = (await record([turn(4, 'Melanie: I painted a sunrise over the lake.')])).results;
    const { rows } = await gw.db.query<{ chunkId: number; nodeKey: string; hasEmbedding: boolean }>(
      `SELECT chunk_id AS "chunkId", node_key AS "nodeKey", embedding IS NOT NULL AS "hasEmbedding", occurred_at,
              kind, title, observation_id FROM chunks WHERE namespace = $1 AND observation_id = $2`,
      [ns, r!.key],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.nodeKey).toBe(r!.key);
    expect(rows[0]!.hasEmbedding).toBe(true);
    const postings = await count(
      'SELECT count(*) AS n FROM chunk_postings WHERE namespace = $1 AND chunk_id = $2',
      [ns, rows[0]!.chunkId],
    );
    expect(postings).toBeGreaterThan(3);

    const chunk = await gw.gql<{ node: Record<string, unknown> }>(
      /* GraphQL */ `
        query Chunk($id: ID!) {
          node(id: $id) {
            ... on Chunk {
              text kind title occurredAt meta
              node { key kind }
              observation { observationId actor { id } }
            }
          }
        }
      `,
      { id: globalId('Chunk', ns, Number(rows[0]!.chunkId)) },
    );
    expect(chunk.errors).toBeUndefined();
    expect(chunk.data!.node).toMatchObject({
      text: 'Melanie: I painted a sunrise over the lake.',
      kind: 'chat.message',
      title: 'chat.message · Caroline · 2024-05-04 08:00 UTC',
      occurredAt: '2024-05-04T08:00:00.000Z',
      meta: { observationId: r!.key, sessionId: 'conv-1' },
      node: { key: r!.key, kind: 'observation' },
      observation: { observationId: r!.key, actor: { id: 'Caroline' } },
    });
  });

  it('the same batch twice changes nothing: DUPLICATE items, identical counts', async () => {
    const batch = [
      turn(5, 'Caroline: Support group again.'),
      {
        source: { system: 'tracker' },
        kind: 'task.completed',
        occurredAt: '2024-05-05T12:00:00Z',
        content: 'Deploy finished',
        assertions: [
          { entity: { key: 'svc:api', kind: 'service', title: 'API', attributes: { version: '1.2' } } },
          { fact: { subject: 'person:alice', predicate: 'DEPLOYED', object: 'svc:api', confidence: 0.7 } },
          { episode: { title: 'Deploy of the API', text: 'The API was deployed to production.' } },
        ],
      },
    ];
    const first = await record(batch);
    expect(first.results.map((r) => r.status)).toEqual(['CREATED', 'CREATED']);
    const before = await counts();
    const second = await record(batch);
    expect(second.results.map((r) => r.status)).toEqual(['DUPLICATE', 'DUPLICATE']);
    expect(second.results.map((r) => r.key)).toEqual(first.results.map((r) => r.key));
    expect(await counts()).toEqual(before);
    // Within one request, a repeat is a duplicate of the earlier item.
    const inBatch = await record([turn(6, 'Same turn'), turn(6, 'Same turn')]);
    expect(inBatch.results.map((r) => r.status)).toEqual(['CREATED', 'DUPLICATE']);
    expect(inBatch.results[1]!.message).toMatch(/item 0/);
  });

  it('the same batch sent concurrently is recorded once', async () => {
    const batch = [7, 8].map((n) => ({
      ...turn(n, `Concurrent turn ${n}`),
      source: { system: 'chat', stream: 'conv-2', externalId: `c-${n}` },
      assertions: [{ fact: { subject: 'person:caroline', predicate: 'SAID', object: `msg:${n}` } }],
    }));
    const payloads = await Promise.all([record(batch), record(batch), record(batch)]);
    for (const i of [0, 1]) {
      expect(payloads.map((p) => p.results[i]!.status).sort()).toEqual(['CREATED', 'DUPLICATE', 'DUPLICATE']);
    }
    expect(
      await count(`SELECT count(*) AS n FROM observations WHERE namespace = $1 AND source_stream = 'conv-2'`),
    ).toBe(2);
    expect(
      await count(
        `SELECT count(*) AS n FROM chunks WHERE namespace = $1 AND meta @> '{"sessionId": "conv-2"}'`,
      ),
    ).toBe(2);
    expect(await count(`SELECT count(*) AS n FROM facts WHERE namespace = $1 AND predicate = 'SAID'`)).toBe(
      2,
    );
  });

  it('without an externalId the canonical content identifies the observation', async () => {
    const obs = {
      source: { system: 'mail' },
      kind: 'mail.received',
      occurredAt: '2024-06-01T00:00:00Z',
      data: { b: 1, a: 2 },
    };
    const a = await record([obs]);
    const b = await record([{ ...obs, data: { a: 2, b: 1 }, occurredAt: '2024-06-01T02:00:00+02:00' }]);
    expect(a.results[0]!.status).toBe('CREATED');
    expect(b.results[0]).toMatchObject({ status: 'DUPLICATE', key: a.results[0]!.key });
    const c = await record([{ ...obs, data: { a: 3 } }]);
    expect(c.results[0]!.status).toBe('CREATED');
  });

  it('projects assertions: entities with versions from occurredAt, facts with placeholders, episodes with provenance', async () => {
    const payload = await record([
      {
        source: { system: 'hr', externalId: 'evt-1' },
        kind: 'person.joined',
        occurredAt: '2024-01-10T09:00:00Z',
        content: 'Bob joined project Apollo as a reviewer.',
        assertions: [
          { entity: { key: 'person:bob', kind: 'person', title: 'Bob', attributes: { role: 'reviewer' } } },
          { fact: { subject: 'person:bob', predicate: 'WORKS_ON', object: 'project:apollo' } },
          {
            episode: {
              key: 'episode:bob-joins',
              title: 'Bob joins Apollo',
              text: 'Bob joined Apollo in January.',
            },
          },
        ],
      },
    ]);
    expect(payload.results[0]!.status).toBe('CREATED');
    expect(payload.accepted).toBe(1);
    expect(payload.partial).toBe(0);
    expect(payload.results[0]!.assertions!.map((x) => `${x.kind}:${x.status}`)).toEqual([
      'entity:APPLIED',
      'fact:APPLIED',
      'episode:APPLIED',
    ]);
    const obsId = payload.results[0]!.key!;
    const { rows: versions } = await gw.db.query<{ validFrom: Date; observationId: string }>(
      `SELECT valid_from AS "validFrom", observation_id AS "observationId" FROM entity_versions
       WHERE namespace = $1 AND key = 'person:bob'`,
      [ns],
    );
    expect(versions).toHaveLength(1);
    expect(new Date(versions[0]!.validFrom).toISOString()).toBe('2024-01-10T09:00:00.000Z');
    expect(versions[0]!.observationId).toBe(obsId);

    const { rows: facts } = await gw.db.query<{ factId: string; validFrom: Date; observationIds: string[] }>(
      `SELECT fact_id AS "factId", valid_from AS "validFrom", observation_ids AS "observationIds" FROM facts
       WHERE namespace = $1 AND subject = 'person:bob'`,
      [ns],
    );
    expect(facts).toHaveLength(1);
    expect(new Date(facts[0]!.validFrom).toISOString()).toBe('2024-01-10T09:00:00.000Z');
    expect(facts[0]!.observationIds).toEqual([obsId]);

    const apollo = await gw.gql<{ entity: Record<string, unknown> }>(ENTITY, { ns, key: 'project:apollo' });
    expect(apollo.data!.entity).toMatchObject({ key: 'project:apollo', placeholder: true });
    // A later entity write fills the placeholder in.
    await record([
      {
        source: { system: 'hr', externalId: 'evt-2' },
        kind: 'project.created',
        occurredAt: '2024-01-11T09:00:00Z',
        assertions: [{ entity: { key: 'project:apollo', kind: 'project', title: 'Apollo' } }],
      },
    ]);
    const filled = await gw.gql<{ entity: Record<string, unknown> }>(ENTITY, { ns, key: 'project:apollo' });
    expect(filled.data!.entity).toMatchObject({ kind: 'project', title: 'Apollo', placeholder: false });

    const episode = await gw.gql<{ entity: Record<string, unknown> }>(ENTITY, {
      ns,
      key: 'episode:bob-joins',
    });
    expect(episode.data!.entity).toMatchObject({ kind: 'episode', title: 'Bob joins Apollo' });
    const { rows: mentions } = await gw.db.query<{ entityKey: string; role: string }>(
      `SELECT entity_key AS "entityKey", role FROM mentions WHERE namespace = $1 AND observation_id = $2
       ORDER BY entity_key`,
      [ns, obsId],
    );
    expect(mentions).toEqual([
      { entityKey: 'episode:bob-joins', role: 'episode' },
      { entityKey: 'person:bob', role: 'entity' },
      { entityKey: 'project:apollo', role: 'fact' },
    ]);
    const { rows: episodeChunks } = await gw.db.query<{ text: string; observationId: string }>(
      `SELECT text, observation_id AS "observationId" FROM chunks WHERE namespace = $1 AND node_key = 'episode:bob-joins'`,
      [ns],
    );
    expect(episodeChunks).toEqual([{ text: 'Bob joined Apollo in January.', observationId: obsId }]);
  });

  it('derives keys for keyless episodes from the observation id', async () => {
    const payload = await record([
      {
        source: { system: 'ops', externalId: 'inc-7' },
        kind: 'incident',
        occurredAt: '2024-02-01T00:00:00Z',
        assertions: [{ episode: { text: 'The deploy failed.' } }, { episode: { text: 'Rolled back.' } }],
      },
    ]);
    const obsId = payload.results[0]!.key!;
    const { rows } = await gw.db.query<{ key: string }>(
      `SELECT key FROM entities WHERE namespace = $1 AND kind = 'episode' AND key LIKE $2 ORDER BY key`,
      [ns, `episode:${obsId}%`],
    );
    expect(rows.map((r) => r.key)).toEqual([`episode:${obsId}`, `episode:${obsId}:1`]);
  });

  it('an observation with rejected assertions is PARTIAL, counted apart from accepted, with per-assertion results', async () => {
    const payload = await record([
      {
        source: { system: 'hr', externalId: 'evt-partial' },
        kind: 'person.updated',
        occurredAt: '2024-03-01T00:00:00Z',
        assertions: [
          { entity: { key: 'person:carol', kind: 'person' } },
          { entity: { key: 'person:dave', kind: 'Bad Kind' } },
          {
            fact: {
              subject: 'person:carol',
              predicate: 'KNOWS',
              object: 'person:dave',
              attributes: { contradicts: 'fact-000000000000000000000000' },
            },
          },
        ],
      },
      {
        source: { system: 'hr', externalId: 'evt-failed' },
        kind: 'person.updated',
        occurredAt: '2024-03-01T00:00:00Z',
        assertions: [
          { entity: { key: 'person:erin', kind: 'Bad Kind' } },
          { fact: { subject: 'a', predicate: 'P', object: 'b', confidence: 5 } },
        ],
      },
    ]);
    expect(payload.results.map((r) => r.status)).toEqual(['PARTIAL', 'PARTIAL']);
    expect({ accepted: payload.accepted, partial: payload.partial, rejected: payload.rejected }).toEqual({
      accepted: 0,
      partial: 2,
      rejected: 0,
    });
    expect(payload.results[0]!.assertions!.map((a) => [a.index, a.kind, a.status, a.code])).toEqual([
      [0, 'entity', 'APPLIED', null],
      [1, 'entity', 'REJECTED', 'BAD_USER_INPUT'],
      [2, 'fact', 'REJECTED', 'NOT_FOUND'],
    ]);
    expect(payload.results[1]!.assertions!.map((a) => a.status)).toEqual(['REJECTED', 'REJECTED']);
    expect(payload.results[0]!.message).toMatch(/^PARTIALLY_PROCESSED: 2 of 3 assertions rejected/);
    const partial = await gw.gql<{ node: Record<string, unknown> }>(OBSERVATION, {
      id: payload.results[0]!.id,
    });
    expect(partial.data!.node.status).toBe('PARTIALLY_PROCESSED');
    expect(partial.data!.node.statusReason).toMatch(/\[1\] entity BAD_USER_INPUT: .*kind/);
    expect(partial.data!.node.statusReason).toMatch(/\[2\] fact NOT_FOUND: .*fact-000000000000000000000000/);
    const failed = await gw.gql<{ node: Record<string, unknown> }>(OBSERVATION, {
      id: payload.results[1]!.id,
    });
    expect(failed.data!.node.status).toBe('FAILED');
    expect(failed.data!.node.statusReason).toMatch(/2 of 2 assertions rejected/);
    // What was rejected left nothing behind; what stood is there.
    expect(
      await count(`SELECT count(*) AS n FROM entities WHERE namespace = $1 AND key = 'person:carol'`),
    ).toBe(1);
    expect(
      await count(
        `SELECT count(*) AS n FROM entities WHERE namespace = $1 AND key IN ('person:dave', 'person:erin')`,
      ),
    ).toBe(0);
    expect(
      await count(`SELECT count(*) AS n FROM facts WHERE namespace = $1 AND subject = 'person:carol'`),
    ).toBe(0);
  });

  it('rejects limit violations with their codes and writes the rest', async () => {
    const base = { source: { system: 'lim' }, kind: 'note', occurredAt: '2024-04-01T00:00:00Z' };
    const payload = await record([
      { ...base, content: 'x'.repeat(1024 * 1024 + 1) },
      { ...base, content: 'fine', scopes: Array.from({ length: 21 }, (_, i) => `project:p${i}`) },
      {
        ...base,
        content: 'too many',
        assertions: Array.from({ length: 201 }, (_, i) => ({ entity: { key: `k${i}`, kind: 'thing' } })),
      },
      { ...base, content: 'data', data: { blob: 'y'.repeat(1024 * 1024) } },
      { ...base, content: 'bad scope', scopes: ['not a scope'] },
      { ...base, content: 'ok one' },
    ]);
    expect(payload.results.map((r) => r.code)).toEqual([
      'CONTENT_TOO_LARGE',
      'TOO_MANY_SCOPES',
      'TOO_MANY_ASSERTIONS',
      'DATA_TOO_LARGE',
      'INVALID_SCOPE',
      null,
    ]);
    expect(payload.accepted).toBe(1);
    expect(
      await count(`SELECT count(*) AS n FROM observations WHERE namespace = $1 AND source_system = 'lim'`),
    ).toBe(1);
  });

  it('marks personal data on the observation and its chunk', async () => {
    const [r] = (
      await record([
        {
          source: { system: 'mail', externalId: 'pii-1' },
          kind: 'mail.received',
          occurredAt: '2024-04-02T00:00:00Z',
          content: 'Write to alice@example.com about it.',
          data: { sessionId: 'sess-9', phone: '+7 915 123-45-67' },
        },
      ])
    ).results;
    const { rows } = await gw.db.query<{ pii: boolean; cats: string[]; session: string }>(
      `SELECT pii, pii_categories AS cats, session_id AS session FROM observations WHERE namespace = $1 AND observation_id = $2`,
      [ns, r!.key],
    );
    expect(rows[0]).toEqual({ pii: true, cats: ['email', 'phone'], session: 'sess-9' });
    const { rows: chunk } = await gw.db.query<{ pii: boolean }>(
      `SELECT pii FROM chunks WHERE namespace = $1 AND observation_id = $2`,
      [ns, r!.key],
    );
    expect(chunk).toEqual([{ pii: true }]);
  });

  it('cuts long content into several chunks, all tied to the observation', async () => {
    const paragraph = 'The quarterly review covered hiring, budgets and the roadmap in detail. ';
    const content = Array.from({ length: 80 }, () => paragraph).join('\n\n');
    const [r] = (
      await record([
        {
          source: { system: 'docs', externalId: 'long-1' },
          kind: 'meeting.notes',
          occurredAt: '2024-04-03T00:00:00Z',
          content,
        },
      ])
    ).results;
    const n = await count(`SELECT count(*) AS n FROM chunks WHERE namespace = $1 AND observation_id = $2`, [
      ns,
      r!.key,
    ]);
    expect(n).toBeGreaterThan(2);
  });

  it('writes plain observations with a constant number of statements, whatever the batch size', async () => {
    const batch = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        source: { system: 'bulk', stream: prefix, externalId: `${prefix}-${i}` },
        kind: 'chat.message',
        occurredAt: '2024-07-01T00:00:00Z',
        content: `Message ${i} about the ${prefix} launch`,
      }));
    const statements = async (obs: unknown[]) => {
      const res = await gw.gql<{ recordObservations: Payload }>(RECORD, { ns, obs });
      expect(res.data!.recordObservations.accepted).toBe(obs.length);
      return res.extensions!.sql!.statements;
    };
    const small = await statements(batch('small', 5));
    const large = await statements(batch('large', 200));
    expect(large).toBe(small);
    // 8 for the rows, then the derived stages: the namespace's context window, a savepoint,
    // contextual indexing, entity linking, release; then the namespace's packs (whose
    // extractors, if any, read facts out of the text).
    expect(large).toBeLessThanOrEqual(14);
  });

  it('carries the observation scopes and provenance to its node, chunk and facts', async () => {
    const [r] = (
      await record([
        {
          source: { system: 'wiki', externalId: 'w-1' },
          kind: 'page.edited',
          occurredAt: '2024-07-02T00:00:00Z',
          scopes: ['workspace:w1', 'project:apollo'],
          content: 'Scoped note',
          provenance: { uri: 'https://wiki.example/p/1' },
          assertions: [{ fact: { subject: 'page:1', predicate: 'EDITED_BY', object: 'person:zed' } }],
        },
      ])
    ).results;
    const { rows } = await gw.db.query<{
      what: string;
      scopes: string[];
      visibility: string[];
      path: string | null;
    }>(
      `SELECT 'entity' AS what, scopes, visibility, source_path AS path FROM entities WHERE namespace = $1 AND key = $2
       UNION ALL SELECT 'chunk', scopes, visibility, source_path FROM chunks WHERE namespace = $1 AND observation_id = $2
       UNION ALL SELECT 'fact', scopes, visibility, source_path FROM facts WHERE namespace = $1 AND subject = 'page:1'
       ORDER BY 1`,
      [ns, r!.key],
    );
    const scoped = { scopes: ['project:apollo', 'workspace:w1'], visibility: ['workspace:w1'] };
    expect(rows).toEqual([
      { what: 'chunk', ...scoped, path: 'https://wiki.example/p/1' },
      { what: 'entity', ...scoped, path: 'https://wiki.example/p/1' },
      { what: 'fact', ...scoped, path: 'https://wiki.example/p/1' },
    ]);
  });

  it('answers namespace and access errors as GraphQL errors, not items', async () => {
    const res = await gw.gql(RECORD, { ns: 'bad namespace!', obs: [] });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
