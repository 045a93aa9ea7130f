import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { ExtractionWorker, type WorkerOptions } from '../../src/modules/extraction/index.js';
import { llmFor } from '../../src/providers/llm.js';
import {
  type ChatRequest,
  type FakeOpenAI,
  type FakeReply,
  startFakeOpenAI,
} from '../helpers/fake-openai.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';
import { RECORD, factsOf, message, setUpTeamNamespace } from './extraction-fixture.js';

const STATUS = /* GraphQL */ `
  query Status($ns: String!) {
    extractionStatus(namespace: $ns) {
      model queued running done failed tokensIn tokensOut factsWritten failures { reason count } settings
    }
  }
`;
const CONFIGURE_EXTRACTION = /* GraphQL */ `
  mutation Conf($ns: String!, $settings: JSON!) { configureExtraction(namespace: $ns, settings: $settings) }
`;

interface Status {
  model: string | null;
  queued: number;
  running: number;
  done: number;
  failed: number;
  tokensIn: number;
  tokensOut: number;
  factsWritten: number;
  failures: { reason: string; count: number }[];
  settings: Record<string, unknown>;
}

/** The messages of an extraction prompt, by number. */
function promptMessages(request: ChatRequest): string[] {
  const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
  return [...user.matchAll(/<message n="\d+"[^>]*>\n([\s\S]*?)\n<\/message>/g)].map((m) => m[1]!);
}

const answer = (facts: unknown[], attributes: unknown[] = []): FakeReply => ({
  content: JSON.stringify({ facts, attributes }),
  usage: { prompt_tokens: 120, completion_tokens: 30 },
});

describe('model extraction: a durable queue, a worker, INFERRED facts through the fact path', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let ns = '';
  let n = 0;
  const worker = (options: Partial<WorkerOptions> = {}) =>
    new ExtractionWorker(gw.db, llmFor(gw.app.deps.config), createLogger('silent'), {
      backoffSeconds: 0,
      maxAttempts: 2,
      timeoutMs: 400,
      ...options,
    });
  const status = async (namespace = ns) => {
    const res = await gw.gql<{ extractionStatus: Status }>(STATUS, { ns: namespace });
    expect(res.errors).toBeUndefined();
    return res.data!.extractionStatus;
  };
  const record = async (items: unknown[], namespace = ns) => {
    const res = await gw.gql<{ recordObservations: { results: { key: string }[] } }>(RECORD, {
      ns: namespace,
      items,
    });
    expect(res.errors).toBeUndefined();
    return res.data!.recordObservations.results.map((r) => r.key);
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(
      { MEMGATE_LLM: 'openai:extract-test', OPENAI_BASE_URL: fake.url },
      {
        extractionWorker: false,
      },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    n += 1;
    ns = `extraction-model-${n}`;
    fake.requests.length = 0;
    await setUpTeamNamespace(gw, ns);
  });

  it('queues each recorded text in the write transaction and reads a session in one call, citing each message', async () => {
    const ids = await record([
      message('team-chat', 'Morning! I am picking up the Orion migration today.', 'alice'),
      message('team-chat', 'Great. Orion runs on Stripe for payments now.', 'bob'),
      message('team-chat', 'Noted, Bob will review it.', 'carol'),
    ]);
    expect(await status()).toMatchObject({ model: 'openai:extract-test', queued: 3, done: 0 });
    fake.handle(() =>
      answer([
        {
          message: 1,
          subject: 'alice',
          subjectKind: 'person',
          predicate: 'works_on',
          object: 'Orion',
          objectKind: 'project',
          confidence: 0.7,
        },
        {
          message: 2,
          subject: 'Orion',
          subjectKind: 'project',
          predicate: 'uses',
          object: 'Stripe',
          objectKind: 'vendor',
          confidence: 0.8,
        },
      ]),
    );
    const rounds = await worker().drain(ns);
    expect(rounds).toEqual([{ kind: 'done', jobs: 3, facts: 2 }]);
    expect(fake.requests).toHaveLength(1);
    expect(promptMessages(fake.requests[0]!)).toHaveLength(3);
    expect(fake.requests[0]!.response_format).toMatchObject({ type: 'json_schema' });

    const orion = await factsOf(gw, ns, 'project:orion');
    expect(orion).toHaveLength(1);
    expect(orion[0]).toMatchObject({
      predicate: 'uses',
      evidence: 'INFERRED',
      object: { key: 'vendor:stripe', kind: 'vendor', placeholder: true },
      observations: [{ observationId: ids[1] }],
    });
    expect(orion[0]!.attributes.learned).toMatchObject({ by: 'model', model: 'extract-test', message: 2 });
    const s = await status();
    expect(s).toMatchObject({ queued: 0, done: 3, failed: 0, tokensIn: 120, tokensOut: 30, factsWritten: 2 });

    const audit = await gw.db.query<{ summary: Record<string, unknown> }>(
      `SELECT summary FROM audit_log WHERE namespace = $1 AND action = 'extraction.model'`,
      [ns],
    );
    expect(audit.rows.map((r) => r.summary)).toEqual([
      expect.objectContaining({ model: 'extract-test', jobs: 3, tokensIn: 120, tokensOut: 30, created: 2 }),
    ]);
  });

  it('never overrides an ASSERTED fact and keeps a learned fact no more visible than its message', async () => {
    await gw.gql(
      `mutation($ns: String!) { assertFacts(namespace: $ns, facts: [
        { subject: "project:orion", predicate: "uses", object: "vendor:stripe" }]) { accepted } }`,
      { ns },
    );
    const [secret] = await record([
      message('ops', 'Orion still bills through Stripe; Vega pays through Adyen.', 'alice', {
        scopes: ['workspace:ops'],
      }),
    ]);
    fake.handle(() =>
      answer([
        {
          message: 1,
          subject: 'Orion',
          subjectKind: 'project',
          predicate: 'uses',
          object: 'Stripe',
          objectKind: 'vendor',
          confidence: 0.9,
        },
        {
          message: 1,
          subject: 'Vega',
          subjectKind: 'project',
          predicate: 'uses',
          object: 'Adyen',
          objectKind: 'vendor',
          confidence: 0.9,
        },
      ]),
    );
    await worker().drain(ns);
    const orion = await factsOf(gw, ns, 'project:orion');
    expect(orion.map((f) => [f.evidence, f.observations.map((o) => o.observationId)])).toEqual([
      ['ASSERTED', [secret]],
    ]);
    const vega = await factsOf(gw, ns, 'project:vega');
    expect(vega[0]).toMatchObject({ evidence: 'INFERRED', scopes: ['workspace:ops'] });
  });

  it('masks personal data in what it sends unless the namespace allows it', async () => {
    fake.handle(() => answer([]));
    await record([message('hr', 'Reach Dana at dana.k@example.com or +7 916 123-45-67.')]);
    await worker().drain(ns);
    const sent = promptMessages(fake.requests[0]!)[0]!;
    expect(sent).not.toContain('dana.k@example.com');
    expect(sent).toContain('[email]');

    const conf = await gw.gql(CONFIGURE_EXTRACTION, { ns, settings: { sendPii: true } });
    expect(conf.errors).toBeUndefined();
    await record([message('hr', 'Her backup address is dana.backup@example.com.')]);
    await worker().drain(ns);
    expect(promptMessages(fake.requests[1]!)[0]).toContain('dana.backup@example.com');
  });

  it('malformed JSON is retried with backoff, then the job is a dead letter with the reason', async () => {
    fake.handle(() => ({ content: '{"facts": [ {"message": 1, "subject": "Al' }));
    await record([message('x', 'Alice works on Orion.')]);
    const rounds = await worker().drain(ns);
    expect(rounds.map((r) => r.kind)).toEqual(['retry', 'dead']);
    const s = await status();
    expect(s).toMatchObject({ queued: 0, done: 0, failed: 1 });
    expect(s.failures[0]!.reason).toMatch(/^malformed/);
  });

  it('a timeout is retried; the next answer is written', async () => {
    let calls = 0;
    fake.handle(() => {
      calls += 1;
      const reply = answer([
        {
          message: 1,
          subject: 'Alice',
          subjectKind: 'person',
          predicate: 'works_on',
          object: 'Lyra',
          objectKind: 'project',
          confidence: 0.6,
        },
      ]);
      return calls === 1 ? { delayMs: 1500, reply } : reply;
    });
    await record([message('x', 'Alice has joined Lyra.')]);
    const rounds = await worker({ maxAttempts: 3 }).drain(ns);
    expect(rounds.map((r) => r.kind)).toEqual(['retry', 'done']);
    expect((rounds[0] as { reason: string }).reason).toMatch(/^timeout/);
    expect((await factsOf(gw, ns, 'person:alice')).map((f) => f.object.key)).toEqual(['project:lyra']);
  });

  it('429 waits what Retry-After asks and does not use up an attempt', async () => {
    fake.handle(() => ({ status: 429, message: 'slow down', headers: { 'retry-after': '1' } }));
    await record([message('x', 'Bob works on Lyra.')]);
    const first = await worker({ maxAttempts: 1 }).drain(ns);
    expect(first.map((r) => r.kind)).toEqual(['retry']);
    expect(await status()).toMatchObject({ queued: 1, failed: 0 });
    expect(await worker({ maxAttempts: 1 }).drain(ns)).toEqual([]); // not before the wait
    fake.handle(() => answer([]));
    await new Promise((r) => setTimeout(r, 1100));
    expect((await worker({ maxAttempts: 1 }).drain(ns)).map((r) => r.kind)).toEqual(['done']);
  });

  it('a partial answer writes its valid items and notes the rest', async () => {
    fake.handle(() =>
      answer([
        {
          message: 1,
          subject: 'Carol',
          subjectKind: 'person',
          predicate: 'works_on',
          object: 'Lyra',
          objectKind: 'project',
          confidence: 0.7,
        },
        { message: 7, subject: 'Nobody', predicate: 'works_on', object: 'Nothing' },
        { subject: 'missing message number' },
      ]),
    );
    await record([message('x', 'Carol is on Lyra now.')]);
    expect(await worker().drain(ns)).toEqual([{ kind: 'done', jobs: 1, facts: 1 }]);
    const { rows } = await gw.db.query<{ last_error: string }>(
      `SELECT last_error FROM extraction_jobs WHERE namespace = $1`,
      [ns],
    );
    expect(rows[0]!.last_error).toMatch(/partial answer: 2 item/);
  });

  it('falls back to a plain JSON object for servers without structured output', async () => {
    fake.handle((req) =>
      (req.response_format as { type?: string } | undefined)?.type === 'json_schema'
        ? { status: 400, message: 'response_format json_schema is not supported' }
        : answer([
            {
              message: 1,
              subject: 'Dana',
              subjectKind: 'person',
              predicate: 'works_on',
              object: 'Vega',
              objectKind: 'project',
              confidence: 0.7,
            },
          ]),
    );
    await record([message('x', 'Dana helps on Vega.')]);
    expect(await worker().drain(ns)).toEqual([{ kind: 'done', jobs: 1, facts: 1 }]);
    expect(fake.requests.map((r) => (r.response_format as { type: string }).type)).toEqual([
      'json_schema',
      'json_object',
    ]);
  });

  it('a worker killed mid-batch loses and duplicates nothing: the batch is taken again once its lease ends', async () => {
    const reply = answer([
      {
        message: 1,
        subject: 'Erik',
        subjectKind: 'person',
        predicate: 'works_on',
        object: 'Orion',
        objectKind: 'project',
        confidence: 0.7,
      },
    ]);
    let release: () => void = () => {};
    fake.handle(() => new Promise<FakeReply>((resolve) => (release = () => resolve(reply))));
    await record([message('x', 'Erik joins Orion.')]);
    // The first worker claims the batch and never settles it (its process is gone).
    const doomed = worker({ leaseSeconds: 1, timeoutMs: 5000 });
    const abandoned = doomed.runOnce(ns);
    await new Promise((r) => setTimeout(r, 200));
    expect(await status()).toMatchObject({ running: 1 });
    fake.handle(() => reply);
    expect(await worker().drain(ns)).toEqual([]); // the lease still holds
    await new Promise((r) => setTimeout(r, 1100));
    expect(await worker().drain(ns)).toEqual([{ kind: 'done', jobs: 1, facts: 1 }]);
    release();
    await abandoned; // the late answer finds its lease lost and rolls back
    const facts = await factsOf(gw, ns, 'person:erik');
    expect(facts).toHaveLength(1);
    expect(facts[0]!.observations).toHaveLength(1);
    expect(await status()).toMatchObject({ done: 1, queued: 0, running: 0 });
  });

  it('stops at the namespace token budget and leaves the rest queued with the reason', async () => {
    await gw.gql(CONFIGURE_EXTRACTION, { ns, settings: { tokenBudget: 100 } });
    fake.handle(() => answer([]));
    await record([message('a', 'First thread.')]);
    await record([message('b', 'Second thread.')]);
    const rounds = await worker().drain(ns);
    expect(rounds.map((r) => r.kind)).toEqual(['done', 'retry']);
    const s = await status();
    expect(s).toMatchObject({ done: 1, queued: 1, tokensIn: 120, tokensOut: 30 });
    expect(s.failures[0]!.reason).toMatch(/token budget/);
  });

  it('a namespace that turned the model off queues nothing', async () => {
    await gw.gql(CONFIGURE_EXTRACTION, { ns, settings: { model: false } });
    await record([message('x', 'Frank works on Vega.')]);
    expect(await status()).toMatchObject({ queued: 0, done: 0 });
  });

  it('rejects unknown or bad settings with BAD_USER_INPUT', async () => {
    const res = await gw.gql(CONFIGURE_EXTRACTION, { ns, settings: { tokenBudget: -5 } });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const unknown = await gw.gql(CONFIGURE_EXTRACTION, { ns, settings: { temperature: 2 } });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('without a model configured', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('nothing is queued and the status says there is no model', async () => {
    const res = await gw.gql(RECORD, {
      ns: 'extraction-off',
      items: [message('x', 'Alice works on Orion.')],
    });
    expect(res.errors).toBeUndefined();
    const { rows } = await gw.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM extraction_jobs`);
    expect(rows[0]!.n).toBe(0);
    const status = await gw.gql<{ extractionStatus: Status }>(STATUS, { ns: 'extraction-off' });
    expect(status.data!.extractionStatus).toMatchObject({ model: null, queued: 0, done: 0 });
  });
});

describe('the extraction status under principals', () => {
  it('is for admins and principals seeing every scope: its counts cover hidden observations too', async () => {
    const { path, tokens } = writeTokensFile([
      { id: 'admin', read: ['*'], write: ['*'], scopes: ['*'], admin: true },
      { id: 'everything', read: ['team'], write: ['team'], scopes: ['*'] },
      { id: 'scoped', read: ['team'], write: ['team'], scopes: ['workspace:team'] },
    ]);
    const gw = await startTestGateway({ MEMGATE_TOKENS_FILE: path });
    try {
      for (const token of [tokens.admin, tokens.everything]) {
        const seen = await gw.gql<{ extractionStatus: Status }>(STATUS, { ns: 'team' }, { token });
        expect(seen.errors).toBeUndefined();
        expect(seen.data!.extractionStatus).toMatchObject({ queued: 0, done: 0 });
      }
      const refused = await gw.gql(STATUS, { ns: 'team' }, { token: tokens.scoped });
      expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(refused.data).toBeNull();
    } finally {
      await gw.close();
    }
  });
});
