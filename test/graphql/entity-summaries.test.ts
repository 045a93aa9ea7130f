import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import {
  assertFacts,
  compile,
  recordObservations,
  redactObservation,
  section,
  supersedeFact,
  upsertEntities,
} from '../helpers/seed-context.js';

// An entity's summary (evidence DERIVED) says what memory knows about it now: attributes in force,
// facts valid now grouped by predicate, the latest notes that mention it — never a superseded value
// as holding, never a row the reader cannot see, with provenance to every source. It is kept in step
// with its evidence in the background (debounced) and served stored; for an earlier asOf, or before
// the refresher has run, it is built on read from what the reader may see.

const NS = 'summaries';

interface Summary {
  text: string;
  evidence: string;
  stored: boolean;
  stale: boolean;
  by: string;
  asOf: string;
  chunk: { id: string; kind: string; meta: { evidence: string } } | null;
  facts: { factId: string }[];
  observations: { observationId: string }[];
}

const SUMMARY = /* GraphQL */ `
  query($ns: String!, $key: String!, $asOf: DateTime) {
    entity(namespace: $ns, key: $key) {
      summary(asOf: $asOf) {
        text evidence stored stale by asOf
        chunk { id kind meta }
        facts { factId }
        observations { observationId }
      }
    }
  }`;

const note = (id: string, occurredAt: string, content: string, extra: Record<string, unknown> = {}) => ({
  source: { system: 'chat', stream: 'team', externalId: id },
  kind: 'message',
  occurredAt,
  content,
  subject: { type: 'project', id: 'falcon' },
  ...extra,
});

describe('entity summaries', () => {
  let gw: TestGateway;
  let tokens: Record<string, string>;
  let leadNow: string;
  let secretNote: string;

  const summaryOf = async (key: string, who = 'admin', asOf?: string): Promise<Summary | null> => {
    const res = await gw.gql<{ entity: { summary: Summary | null } | null }>(
      SUMMARY,
      { ns: NS, key, asOf },
      { token: tokens[who] },
    );
    expect(res.errors).toBeUndefined();
    return res.data!.entity?.summary ?? null;
  };

  /** The gateway as the admin principal, for the seed helpers. */
  const asAdmin = (): TestGateway => ({
    ...gw,
    gql: (query, variables, options) =>
      gw.gql(query, variables, { ...options, token: options?.token ?? tokens.admin }),
  });

  /** Waits until the refresher has nothing pending and the summary is stored. */
  const refreshed = async (key: string, until: (s: Summary) => boolean = () => true): Promise<Summary> => {
    let last = '';
    for (let i = 0; i < 100; i++) {
      const status = await gw.gql<{ summaryStatus: { pending: number } }>(
        'query($ns: String!) { summaryStatus(namespace: $ns) { pending summaries } }',
        { ns: NS },
        { token: tokens.admin },
      );
      expect(status.errors).toBeUndefined();
      const s = await summaryOf(key);
      if (status.data!.summaryStatus.pending === 0 && s?.stored && !s.stale && until(s)) return s;
      last = JSON.stringify({ status: status.data, stored: s?.stored, stale: s?.stale });
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the summary of ${key} was not refreshed in 20 s: ${last}`);
  };

  beforeAll(async () => {
    const written = writeTokensFile([
      { id: 'admin', read: [NS], write: [NS], scopes: ['*'], admin: true },
      { id: 'reader', read: [NS] },
      { id: 'hr', read: [NS], scopes: ['workspace:hr'] },
    ]);
    tokens = written.tokens;
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: written.path, MEMGATE_SUMMARIES: '1' });
    const as = asAdmin();
    await upsertEntities(as, NS, [
      { key: 'person:lena', kind: 'person', title: 'Lena Ortiz', validFrom: '2024-10-01T08:00:00Z' },
      { key: 'person:marco', kind: 'person', title: 'Marco Bianchi', validFrom: '2024-10-01T08:00:00Z' },
      {
        key: 'project:falcon',
        kind: 'project',
        title: 'Project Falcon',
        attributes: { status: 'building' },
        validFrom: '2024-10-01T08:00:00Z',
      },
    ]);
    const [lead] = await assertFacts(as, NS, [
      {
        subject: 'person:marco',
        predicate: 'LEADS',
        object: 'project:falcon',
        validFrom: '2024-10-01T09:00:00Z',
      },
    ]);
    const [superseding] = await supersedeFact(as, NS, lead!, {
      subject: 'person:lena',
      predicate: 'LEADS',
      object: 'project:falcon',
      validFrom: '2024-10-08T09:00:00Z',
    });
    leadNow = superseding!.key!;
    await recordObservations(as, NS, [
      note('n1', '2024-10-02T09:00:00Z', 'Kickoff went well. Falcon ships its beta on November 3.'),
      note(
        'n2',
        '2024-10-09T09:00:00Z',
        'Lena takes over Falcon from Marco. The launch moved to November 10.',
      ),
    ]);
    const [secret] = await recordObservations(as, NS, [
      note('n3', '2024-10-10T09:00:00Z', 'Falcon budget cut to 40k, confidential.', {
        scopes: ['workspace:hr'],
      }),
    ]);
    secretNote = secret!.key!;
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('states what holds now, grouped, and no superseded value as holding', async () => {
    const s = await refreshed('project:falcon');
    expect(s.evidence).toBe('DERIVED');
    expect(s.by).toBe('extractive');
    const [now, notes = ''] = s.text.split('Latest notes:');
    expect(now).toContain('Project Falcon (project), as of');
    expect(now).toContain('- status: building');
    expect(now).toContain('Lena Ortiz LEADS Project Falcon (since 2024-10-08)');
    expect(now).not.toContain('Marco');
    // Notes are dated quotes, newest first; the sentence that states the change is kept.
    expect(notes.indexOf('2024-10-09')).toBeLessThan(notes.indexOf('2024-10-02'));
    expect(notes).toContain('Lena takes over Falcon from Marco.');
    expect(s.facts.map((f) => f.factId)).toEqual([leadNow]);
    // The admin sees every scope: its summary also quotes the restricted note.
    expect(s.observations.map((o) => o.observationId)).toContain(secretNote);
    expect(s.observations).toHaveLength(3);
    expect(s.chunk?.kind).toBe('summary');
    expect(s.chunk?.meta.evidence).toBe('DERIVED');
  });

  it('leads a pack for a query naming the entity, after what holds now, within a quarter of the budget', async () => {
    await refreshed('project:falcon');
    for (const budgetTokens of [2000, 400]) {
      const pack = await compile(asAdmin(), {
        namespaces: [NS],
        query: 'What do we know about Project Falcon?',
        budgetTokens,
      });
      const kinds = pack.sections.map((sec) => sec.kind);
      expect(kinds.indexOf('SUMMARIES')).toBe(kinds.indexOf('CURRENT_STATE') + 1);
      const [item] = section(pack, 'SUMMARIES');
      expect(item!.kind).toBe('chunk');
      expect(item!.text).toContain('Project Falcon (project), as of');
      expect(item!.tokenEstimate).toBeLessThanOrEqual(budgetTokens / 4 + 20);
      if (budgetTokens === 2000) expect(item!.text).toContain('Lena Ortiz LEADS Project Falcon');
    }
    // A pack for an instant before the summary was built gets none: it states what held when built.
    const past = await compile(asAdmin(), {
      namespaces: [NS],
      query: 'What do we know about Project Falcon?',
      budgetTokens: 2000,
      asOf: '2024-10-05T00:00:00Z',
    });
    expect(section(past, 'SUMMARIES')).toEqual([]);
  });

  it('for an earlier asOf, is built on read from what held then', async () => {
    const s = (await summaryOf('project:falcon', 'admin', '2024-10-05T00:00:00Z'))!;
    expect(s.stored).toBe(false);
    expect(s.text).toContain('Marco Bianchi LEADS Project Falcon (since 2024-10-01)');
    expect(s.text).not.toContain('Lena Ortiz LEADS');
    expect(s.text).not.toContain('November 10');
  });

  it('is never served to a reader who cannot see one of its sources', async () => {
    const admin = await refreshed('project:falcon');
    // The admin (every scope) is served the richest class: it rests on the restricted note too.
    expect(admin.text).toContain('budget cut to 40k');
    const reader = (await summaryOf('project:falcon', 'reader'))!;
    expect(reader.stored).toBe(true);
    expect(reader.text).not.toContain('40k');
    expect(reader.observations.map((o) => o.observationId)).not.toContain(secretNote);
    const hr = (await summaryOf('project:falcon', 'hr'))!;
    expect(hr.text).toContain('budget cut to 40k');
    // The restricted summary itself is absent for the reader: its id reads like an unknown one.
    const walk = await gw.gql(
      'query($id: ID!) { provenance(id: $id) { steps { kind } } }',
      { id: hr.chunk!.id },
      {
        token: tokens.reader,
      },
    );
    expect(walk.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Search sees the same split: the public summary for the reader, never the restricted one.
    const search = await gw.gql<{ search: { hits: { chunk: { kind: string; text: string } }[] } }>(
      `{ search(input: { namespaces: ["${NS}"], query: "Falcon budget", k: 10 }) { hits { chunk { kind text } } } }`,
      {},
      { token: tokens.reader },
    );
    expect(search.errors).toBeUndefined();
    const summaries = search.data!.search.hits.filter((h) => h.chunk.kind === 'summary');
    expect(summaries.length).toBeGreaterThan(0);
    for (const h of summaries) expect(h.chunk.text).not.toContain('40k');
  });

  it('walks its provenance from the summary to the facts and observations it rests on', async () => {
    await refreshed('project:falcon');
    const s = (await summaryOf('project:falcon', 'reader'))!;
    const res = await gw.gql<{ provenance: { steps: { kind: string; label: string; id: string | null }[] } }>(
      'query($id: ID!) { provenance(id: $id) { steps { kind label id } } }',
      { id: s.chunk!.id },
      { token: tokens.reader },
    );
    expect(res.errors).toBeUndefined();
    const steps = res.data!.provenance.steps;
    expect(steps[0]).toMatchObject({ kind: 'chunk', label: 'summary of Project Falcon (DERIVED)' });
    expect(
      steps.some((st) => st.kind === 'fact' && st.label.includes('person:lena —LEADS→ project:falcon')),
    ).toBe(true);
    expect(steps.filter((st) => st.kind === 'observation').length).toBeGreaterThanOrEqual(2);
  });

  it('follows changes: a new fact is summarised after the debounce', async () => {
    await assertFacts(asAdmin(), NS, [
      {
        subject: 'project:falcon',
        predicate: 'USES',
        object: 'person:marco',
        validFrom: '2024-10-11T09:00:00Z',
      },
    ]);
    const stale = (await summaryOf('project:falcon'))!;
    expect(stale.text).not.toContain('USES');
    // The change is marked once its notice arrives, then rebuilt after the debounce.
    const s = await refreshed('project:falcon', (x) => x.text.includes('USES'));
    expect(s.text).toContain('- USES: Marco Bianchi (since 2024-10-11)');
  });

  it('drops a summary quoting a redacted observation in the redaction itself, then rebuilds without it', async () => {
    const before = await refreshed('project:falcon');
    const quoted = before.observations[0]!.observationId;
    await redactObservation(asAdmin(), NS, quoted);
    // Right after the redaction commits: no stored summary quotes it (one built on read cannot).
    const right = (await summaryOf('project:falcon'))!;
    expect(right.observations.map((o) => o.observationId)).not.toContain(quoted);
    const after = await refreshed('project:falcon');
    expect(after.stored).toBe(true);
    expect(after.observations.map((o) => o.observationId)).not.toContain(quoted);
  });

  it('purging an entity drops, in the purge, every summary that states one of its facts', async () => {
    const before = await refreshed('project:falcon', (x) => x.text.includes('USES: Marco Bianchi'));
    expect(before.stored).toBe(true);
    const purged = await gw.gql(
      'mutation { purgeEntity(namespace: "summaries", key: "person:marco", reason: "test") { accepted } }',
      {},
      { token: tokens.admin },
    );
    expect(purged.errors).toBeUndefined();
    const right = (await summaryOf('project:falcon'))!;
    expect(right.text).not.toContain('Marco Bianchi');
    const after = await refreshed('project:falcon');
    expect(after.text).not.toContain('Marco Bianchi');
  });

  it('summary status and rebuilds need an admin or a principal that sees every scope', async () => {
    const denied = await gw.gql(
      'mutation { rebuildSummaries(namespace: "summaries") }',
      {},
      { token: tokens.hr },
    );
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const queued = await gw.gql<{ rebuildSummaries: number }>(
      'mutation { rebuildSummaries(namespace: "summaries") }',
      {},
      { token: tokens.admin },
    );
    expect(queued.errors).toBeUndefined();
    expect(queued.data!.rebuildSummaries).toBe(2); // Falcon and Lena (Marco was purged)
    await refreshed('project:falcon');
  });
});

/** Records the name (the leading comment) of every statement the gateway runs, transactions included. */
function statementNames(db: Database, names: string[]): Database {
  const name = (text: string) => /^\s*\/\*\s*([\w.-]+)\s*\*\//.exec(text)?.[1] ?? 'unnamed';
  const spyOn = (q: Queryable): Queryable => ({
    query: (text, params) => {
      names.push(name(text));
      return q.query(text, params);
    },
  });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'query') return spyOn(target).query;
      if (prop === 'transaction')
        return (label: string, fn: (tx: Queryable) => Promise<unknown>) =>
          target.transaction(label, (tx) => fn(spyOn(tx)));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('what keeping summaries costs the write path', () => {
  it('adds no statement to a write; a burst of batches is marked in at most one statement per batch', async () => {
    const names: string[] = [];
    const on = await startTestGateway(
      { MEMGATE_SUMMARIES: '1' },
      {},
      { wrapDatabase: (db) => statementNames(db, names) },
    );
    const off = await startTestGateway({ MEMGATE_SUMMARIES: '0' });
    try {
      const batch = (i: number) => [
        note(`b${i}a`, `2024-11-0${i + 1}T09:00:00Z`, `Falcon status ${i}.`),
        note(`b${i}b`, `2024-11-0${i + 1}T10:00:00Z`, `Falcon review ${i}.`),
      ];
      const write = `mutation($o: [ObservationInput!]!) { recordObservations(namespace: "${NS}", observations: $o) { accepted } }`;
      const costs: [number, number][] = [];
      for (let i = 0; i < 5; i++) {
        const a = await on.gql(write, { o: batch(i) });
        const b = await off.gql(write, { o: batch(i) });
        expect(a.errors ?? b.errors).toBeUndefined();
        costs.push([a.extensions!.sql!.statements, b.extensions!.sql!.statements]);
      }
      for (const [withSummaries, without] of costs) expect(withSummaries).toBe(without);
      for (let i = 0; i < 50 && !names.includes('deleteSummaries'); i++)
        await new Promise((r) => setTimeout(r, 100));
      const marks = names.filter((n) => n === 'markSummariesStale').length;
      expect(marks).toBeGreaterThanOrEqual(1);
      expect(marks).toBeLessThanOrEqual(5);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
