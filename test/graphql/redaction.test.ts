import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalId } from '../../src/global-id.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { insertChunks } from '../helpers/postings.js';

const PAYLOAD = 'accepted rejected results { index status id key code message }';
const RECORD = `mutation($ns: String!, $obs: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $obs) { ${PAYLOAD} } }`;
const ASSERT = `mutation($ns: String!, $facts: [FactInput!]!) { assertFacts(namespace: $ns, facts: $facts) { ${PAYLOAD} } }`;
const REDACT = `mutation($ns: String!, $id: String!, $reason: String!) { redactObservation(namespace: $ns, observationId: $id, reason: $reason) { ${PAYLOAD} } }`;
const PURGE = `mutation($ns: String!, $key: String!, $reason: String!) { purgeEntity(namespace: $ns, key: $key, reason: $reason) { ${PAYLOAD} } }`;
const NODE = `query($id: ID!) { node(id: $id) {
  ... on Observation { observationId content data status statusReason }
  ... on Fact { factId factStatus: status statusReason conflict conflictsWith { factId } observations { observationId } }
} }`;

interface Payload {
  accepted: number;
  rejected: number;
  results: {
    index: number;
    status: string;
    id: string | null;
    key: string | null;
    code: string | null;
    message: string | null;
  }[];
}

describe('redaction and purge over HTTP', () => {
  let gw: TestGateway;
  const ns = 'redact-test';

  const mutate = async (
    query: string,
    variables: Record<string, unknown>,
    field: string,
  ): Promise<Payload> => {
    const res = await gw.gql<Record<string, Payload>>(query, { ns, ...variables });
    expect(res.errors).toBeUndefined();
    return res.data![field]!;
  };
  const node = async (id: string) => {
    const res = await gw.gql<{ node: Record<string, unknown> }>(NODE, { id });
    expect(res.errors).toBeUndefined();
    return res.data!.node;
  };
  const audit = async (action: string) =>
    (
      await gw.db.query<{ principal: string; target: string; summary: Record<string, unknown> }>(
        `SELECT principal_id AS principal, target, summary FROM audit_log WHERE namespace = $1 AND action = $2 ORDER BY audit_id`,
        [ns, action],
      )
    ).rows;

  const obs = (id: string, content: string, assertions: unknown[]) => ({
    source: { system: 'crm', externalId: id },
    kind: 'crm.note',
    occurredAt: '2024-02-01T00:00:00Z',
    content,
    data: { email: 'zoe@example.com' },
    assertions,
  });

  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('redaction replaces content and data, deletes its chunks and takes it out of every fact’s evidence', async () => {
    const fact = (object: string) => ({
      fact: { subject: 'person:zoe', predicate: 'CUSTOMER_OF', object, validFrom: '2024-01-01T00:00:00Z' },
    });
    const payload = await mutate(
      RECORD,
      {
        obs: [
          obs('n-1', 'Zoe (zoe@example.com) signed the contract for Acme and Globex.', [
            fact('org:acme'),
            fact('org:globex'),
          ]),
          obs('n-2', 'Zoe renewed with Globex.', [fact('org:globex')]),
        ],
      },
      'recordObservations',
    );
    const [first, second] = payload.results;
    const factIds = (
      await gw.db.query<{ id: string; object: string }>(
        `SELECT fact_id AS id, object FROM facts WHERE namespace = $1 AND subject = 'person:zoe' ORDER BY object`,
        [ns],
      )
    ).rows;
    const [acme, globex] = factIds.map((r) => r.id);
    expect(
      await gw.db
        .query(`SELECT 1 FROM chunks WHERE namespace = $1 AND observation_id = $2`, [ns, first!.key])
        .then((r) => r.rows.length),
    ).toBe(1);

    const redacted = await mutate(
      REDACT,
      { id: first!.key, reason: 'GDPR erasure request #12' },
      'redactObservation',
    );
    expect(redacted).toMatchObject({ accepted: 1, results: [{ status: 'UPDATED', key: first!.key }] });

    expect(await node(first!.id!)).toMatchObject({
      content: '[redacted]',
      data: null,
      status: 'REDACTED',
      statusReason: 'GDPR erasure request #12',
    });
    const { rows: chunks } = await gw.db.query(
      `SELECT 1 FROM chunks WHERE namespace = $1 AND observation_id = $2`,
      [ns, first!.key],
    );
    expect(chunks).toHaveLength(0);
    const { rows: postings } = await gw.db.query(
      `SELECT 1 FROM chunk_postings WHERE namespace = $1 AND lexeme = 'contract'`,
      [ns],
    );
    expect(postings).toHaveLength(0);

    // Acme rested on the redacted observation alone: kept, EVIDENCE_LOST. Globex still has n-2.
    expect(await node(globalId('Fact', ns, acme!))).toMatchObject({
      factStatus: 'EVIDENCE_LOST',
      observations: [],
    });
    expect(await node(globalId('Fact', ns, globex!))).toMatchObject({
      factStatus: 'ACTIVE',
      observations: [{ observationId: second!.key }],
    });

    const [entry] = await audit('redact_observation');
    expect(entry).toMatchObject({
      principal: 'local',
      target: first!.key,
      summary: {
        reason: 'GDPR erasure request #12',
        kind: 'crm.note',
        chunksDeleted: 1,
        factsAffected: [acme, globex].sort(),
        factsEvidenceLost: [acme],
        pii: true,
      },
    });
    expect(JSON.stringify(entry!.summary)).not.toMatch(/zoe@example|contract/);

    // Again: nothing more to do.
    const again = await mutate(REDACT, { id: first!.key, reason: 'again' }, 'redactObservation');
    expect(again.results[0]!.status).toBe('UNCHANGED');
    expect(await audit('redact_observation')).toHaveLength(1);
  });

  it('a fact asserted directly (no observations) never loses evidence', async () => {
    const [f] = (
      await mutate(ASSERT, { facts: [{ subject: 'a', predicate: 'P', object: 'b' }] }, 'assertFacts')
    ).results;
    const [o] = (await mutate(RECORD, { obs: [obs('n-3', 'unrelated', [])] }, 'recordObservations')).results;
    await mutate(REDACT, { id: o!.key, reason: 'test' }, 'redactObservation');
    expect(await node(f!.id!)).toMatchObject({ factStatus: 'ACTIVE' });
  });

  it('redacting an unknown observation is a NOT_FOUND item', async () => {
    const res = await mutate(
      REDACT,
      { id: 'obs-000000000000000000000000', reason: 'x' },
      'redactObservation',
    );
    expect(res).toMatchObject({
      accepted: 0,
      rejected: 1,
      results: [{ status: 'REJECTED', code: 'NOT_FOUND' }],
    });
  });

  it('purgeEntity deletes the entity, its versions, chunks, facts and mentions, and audits a summary', async () => {
    await mutate(
      RECORD,
      {
        obs: [
          obs('p-1', 'Yuri moved to Lisbon.', [
            { entity: { key: 'person:yuri', kind: 'person', title: 'Yuri', attributes: { city: 'Lisbon' } } },
            { fact: { subject: 'person:yuri', predicate: 'LIVES_IN', object: 'city:lisbon' } },
            { fact: { subject: 'org:acme', predicate: 'EMPLOYS', object: 'person:yuri' } },
          ]),
        ],
      },
      'recordObservations',
    );
    await insertChunks(
      gw.db,
      `INSERT INTO chunks (namespace, node_key, ord, kind, text, search_text) VALUES ($1, 'person:yuri', 0, 'note', 'Yuri bio', 'Yuri bio')`,
      [ns],
    );
    const { rows: conflictRows } = await gw.db.query<{ id: string }>(
      `SELECT fact_id AS id FROM facts WHERE namespace = $1 AND subject = 'person:yuri'`,
      [ns],
    );
    // A rival marked as conflicting with one of Yuri's facts loses the mark when it goes.
    const [rival] = (
      await mutate(
        ASSERT,
        {
          facts: [
            {
              subject: 'person:xena',
              predicate: 'LIVES_IN',
              object: 'city:rome',
              attributes: { contradicts: conflictRows[0]!.id },
            },
          ],
        },
        'assertFacts',
      )
    ).results;
    expect(await node(rival!.id!)).toMatchObject({ conflict: true });

    const res = await mutate(PURGE, { key: 'person:yuri', reason: 'right to be forgotten' }, 'purgeEntity');
    expect(res).toMatchObject({ accepted: 1, results: [{ status: 'UPDATED', key: 'person:yuri' }] });
    const left = async (sql: string) => (await gw.db.query(sql, [ns])).rows.length;
    expect(await left(`SELECT 1 FROM entities WHERE namespace = $1 AND key = 'person:yuri'`)).toBe(0);
    expect(await left(`SELECT 1 FROM entity_versions WHERE namespace = $1 AND key = 'person:yuri'`)).toBe(0);
    expect(await left(`SELECT 1 FROM chunks WHERE namespace = $1 AND node_key = 'person:yuri'`)).toBe(0);
    expect(
      await left(
        `SELECT 1 FROM facts WHERE namespace = $1 AND (subject = 'person:yuri' OR object = 'person:yuri')`,
      ),
    ).toBe(0);
    expect(await left(`SELECT 1 FROM mentions WHERE namespace = $1 AND entity_key = 'person:yuri'`)).toBe(0);
    expect(await left(`SELECT 1 FROM entities WHERE namespace = $1 AND key = 'city:lisbon'`)).toBe(1);
    expect(await node(rival!.id!)).toMatchObject({ conflict: false, conflictsWith: [] });

    const [entry] = await audit('purge_entity');
    expect(entry).toMatchObject({
      target: 'person:yuri',
      summary: {
        reason: 'right to be forgotten',
        kind: 'person',
        attributeVersions: 1,
        chunks: 1,
        facts: 2,
        mentions: 1,
      },
    });
    const missing = await mutate(PURGE, { key: 'person:yuri', reason: 'again' }, 'purgeEntity');
    expect(missing.results[0]).toMatchObject({ status: 'REJECTED', code: 'NOT_FOUND' });
  });

  it('audit records cannot be changed or deleted, whoever asks', async () => {
    await expect(gw.db.query(`DELETE FROM audit_log WHERE namespace = $1`, [ns])).rejects.toThrow(
      /append-only/,
    );
    await expect(gw.db.query(`UPDATE audit_log SET action = 'x' WHERE namespace = $1`, [ns])).rejects.toThrow(
      /append-only/,
    );
    expect((await audit('purge_entity')).length).toBe(1);
  });
});
