import type { TestGateway } from './gateway.js';

/**
 * A small story for the explorer page, written through the public mutations as `token`:
 * Alice joins Acme (2024-01-01), lives in Paris and then — in open conflict — Berlin, leads
 * Project Atlas (owned by Acme: two hops from her), and moves to Globex on 2025-03-01 (a
 * supersession, with her attributes changing the same day). She is in the Platform team (a long
 * chat message says so), and her reporting to Carol lost its evidence when the HR note behind
 * it was redacted: with the Atlas plan, ten entities within two hops of her. Eve and her fact
 * carry the visibility scope workspace:secret; Alice's email is personal data.
 */
export const EXPLORER_NAMESPACE = 'shop';
export const SUPERSEDED_AT = '2025-03-01T00:00:00Z';

const PAYLOAD = 'accepted rejected results { index status key code message }';

interface Payload {
  rejected: number;
  results: { key: string | null; code: string | null; message: string | null }[];
}

export async function seedExplorer(
  gw: TestGateway,
  token: string,
): Promise<{ acmeFact: string; globexFact: string }> {
  const ns = EXPLORER_NAMESPACE;
  const write = async (field: string, query: string, variables: Record<string, unknown>) => {
    const res = await gw.gql<Record<string, Payload>>(query, { ns, ...variables }, { token });
    if (res.errors?.length) throw new Error(`${field}: ${JSON.stringify(res.errors)}`);
    const payload = res.data![field]!;
    if (payload.rejected > 0) throw new Error(`${field}: ${JSON.stringify(payload.results)}`);
    return payload.results.map((r) => r.key!);
  };
  const upsert = (entities: unknown[]) =>
    write(
      'upsertEntities',
      `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${PAYLOAD} } }`,
      { e: entities },
    );
  const record = (observations: unknown[]) =>
    write(
      'recordObservations',
      `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { ${PAYLOAD} } }`,
      { o: observations },
    );
  const assert = (facts: unknown[]) =>
    write(
      'assertFacts',
      `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`,
      { f: facts },
    );

  await upsert([
    {
      key: 'person:alice',
      kind: 'person',
      title: 'Alice Martin',
      attributes: { role: 'engineer', email: 'alice@example.com', level: 2 },
      validFrom: '2024-01-01T00:00:00Z',
    },
    { key: 'person:bob', kind: 'person', title: 'Bob Stone', attributes: { role: 'designer' } },
    { key: 'org:acme', kind: 'org', title: 'Acme Corp', attributes: { industry: 'logistics' } },
    { key: 'org:globex', kind: 'org', title: 'Globex', attributes: { industry: 'energy' } },
    { key: 'project:atlas', kind: 'project', title: 'Project Atlas', attributes: { status: 'active' } },
    { key: 'city:paris', kind: 'city', title: 'Paris' },
    { key: 'city:berlin', kind: 'city', title: 'Berlin' },
    { key: 'person:eve', kind: 'person', title: 'Eve Hidden', scopes: ['workspace:secret'] },
    { key: 'person:carol', kind: 'person', title: 'Carol Diaz', attributes: { role: 'director' } },
    { key: 'team:platform', kind: 'team', title: 'Platform team' },
  ]);
  await upsert([
    {
      key: 'person:alice',
      kind: 'person',
      title: 'Alice Martin',
      attributes: { role: 'manager', email: 'alice@example.com', level: 3 },
      validFrom: SUPERSEDED_AT,
    },
  ]);
  const [joined, , moved] = await record([
    {
      source: { system: 'hr', stream: 'events', externalId: 'e-101' },
      kind: 'hr_event',
      occurredAt: '2024-01-01T09:00:00Z',
      content: 'Alice Martin joined Acme Corp as an engineer.',
      provenance: { uri: 'https://hr.example.com/events/e-101', system: 'workday' },
      subject: { type: 'person', id: 'alice' },
    },
    {
      source: { system: 'chat', stream: 'atlas', externalId: 'm-7' },
      kind: 'message',
      occurredAt: '2024-06-01T10:00:00Z',
      content: 'Alice leads Project Atlas; Bob joins the team. Atlas is an Acme Corp project.',
      provenance: { uri: 'https://chat.example.com/atlas/m-7' },
      actor: { type: 'person', id: 'bob' },
    },
    {
      source: { system: 'hr', stream: 'events', externalId: 'e-202' },
      kind: 'hr_event',
      occurredAt: '2025-03-01T09:00:00Z',
      content: 'Alice Martin left Acme Corp and joined Globex as a manager.',
      provenance: { uri: 'https://hr.example.com/events/e-202', system: 'workday' },
      actor: { type: 'user', id: 'dana.hr' },
    },
  ]);
  const [acmeFact] = await assert([
    {
      subject: 'person:alice',
      predicate: 'works_at',
      object: 'org:acme',
      validFrom: '2024-01-01T00:00:00Z',
      observationIds: [joined],
    },
    {
      subject: 'person:alice',
      predicate: 'leads',
      object: 'project:atlas',
      validFrom: '2024-06-01T00:00:00Z',
    },
    {
      subject: 'person:bob',
      predicate: 'member_of',
      object: 'project:atlas',
      validFrom: '2024-06-01T00:00:00Z',
    },
    {
      subject: 'project:atlas',
      predicate: 'owned_by',
      object: 'org:acme',
      validFrom: '2024-06-01T00:00:00Z',
    },
  ]);
  const [paris] = await assert([
    {
      subject: 'person:alice',
      predicate: 'lives_in',
      object: 'city:paris',
      validFrom: '2024-02-01T00:00:00Z',
    },
  ]);
  await assert([
    {
      subject: 'person:alice',
      predicate: 'lives_in',
      object: 'city:berlin',
      validFrom: '2024-05-01T00:00:00Z',
      attributes: { contradicts: paris },
    },
    {
      subject: 'person:eve',
      predicate: 'works_at',
      object: 'org:acme',
      validFrom: '2024-01-01T00:00:00Z',
      scopes: ['workspace:secret'],
    },
  ]);
  const [globexFact] = await write(
    'supersedeFact',
    `mutation($ns: String!, $id: String!, $by: FactInput!) { supersedeFact(namespace: $ns, factId: $id, by: $by) { ${PAYLOAD} } }`,
    {
      id: acmeFact,
      by: {
        subject: 'person:alice',
        predicate: 'works_at',
        object: 'org:globex',
        validFrom: SUPERSEDED_AT,
        observationIds: [moved],
      },
    },
  );
  await teamAndReporting(record, assert, write);
  await write(
    'retainDocuments',
    `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { ${PAYLOAD} } }`,
    {
      d: [
        {
          key: 'doc:atlas-plan',
          title: 'Atlas plan',
          content:
            '# Project Atlas\n\nAtlas moves the Acme Corp billing to the new ledger in Q3.\n\n## Team\n\nAlice Martin leads Atlas; Bob Stone designs the screens.\n\n## Risks\n\nThe ledger migration needs a freeze week before the cut-over.',
          provenance: { uri: 'https://wiki.example.com/atlas/plan', revision: 4 },
          links: ['project:atlas'],
        },
      ],
    },
  );
  return { acmeFact: acmeFact!, globexFact: globexFact! };
}

type Writer = (rows: unknown[]) => Promise<string[]>;

/**
 * Alice in the Platform team, from a chat message longer than a provenance step shows at once;
 * and her reporting to Carol, whose only evidence is redacted afterwards (EVIDENCE_LOST).
 */
async function teamAndReporting(
  record: Writer,
  assert: Writer,
  write: (field: string, query: string, variables: Record<string, unknown>) => Promise<string[]>,
): Promise<void> {
  const [welcome, note] = await record([
    {
      source: { system: 'chat', stream: 'platform', externalId: 'm-12' },
      kind: 'message',
      occurredAt: '2024-01-02T08:30:00Z',
      actor: { type: 'person', id: 'carol' },
      content: [
        'Welcome to the Platform team, Alice! You will pair with the billing people for the first',
        'weeks, then take over the deployment pipeline and the on-call rota from me. The runbooks',
        'live in the wiki under Platform/Operations, the dashboards are linked from there, and the',
        'weekly sync is on Tuesdays at ten. Ask anything in this channel — nobody minds questions,',
        'and the sooner you break something small, the sooner you know where everything is.',
      ].join(' '),
      provenance: { uri: 'https://chat.example.com/platform/m-12' },
    },
    {
      source: { system: 'hr', stream: 'notes', externalId: 'n-31' },
      kind: 'hr_note',
      occurredAt: '2025-03-02T09:00:00Z',
      content: 'Alice Martin reports to Carol Diaz from March.',
    },
  ]);
  await assert([
    {
      subject: 'person:alice',
      predicate: 'member_of',
      object: 'team:platform',
      validFrom: '2024-01-02T00:00:00Z',
      observationIds: [welcome],
    },
    {
      subject: 'person:alice',
      predicate: 'reports_to',
      object: 'person:carol',
      validFrom: '2025-03-02T00:00:00Z',
      observationIds: [note],
    },
  ]);
  await write(
    'redactObservation',
    `mutation($ns: String!, $id: String!) { redactObservation(namespace: $ns, observationId: $id, reason: "asked to be forgotten") { ${PAYLOAD} } }`,
    { id: note },
  );
}
