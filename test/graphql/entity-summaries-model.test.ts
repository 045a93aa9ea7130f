import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatRequest, type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { assertFacts, upsertEntities } from '../helpers/seed-context.js';

// With a model configured, the refresher asks it to rewrite each summary from the same statements,
// tagged, citing the tags it uses; the summary then rests on exactly what it cites. A refused or
// failed answer keeps the extractive summary. Personal data is masked before it leaves.

const NS = 'summaries-model';

interface Summary {
  text: string;
  by: string;
  stored: boolean;
  stale: boolean;
  facts: { factId: string }[];
  observations: { observationId: string }[];
}

const isSummaryRequest = (r: ChatRequest) =>
  JSON.stringify(r.response_format ?? '').includes('entity_summary');

/** The tag the prompt gives the statement holding `text`. */
function tagOf(r: ChatRequest, text: string): string {
  const line = r.messages[1]!.content.split('\n').find((l) => l.includes(text));
  return /^\[([AFN]\d+)\]/.exec(line ?? '')?.[1] ?? 'none';
}

describe('model-written entity summaries', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let lead: string;

  const summaryOf = async (key: string): Promise<Summary> => {
    const res = await gw.gql<{ entity: { summary: Summary } }>(
      `query($key: String!) { entity(namespace: "${NS}", key: $key) {
         summary { text by stored stale facts { factId } observations { observationId } } } }`,
      { key },
    );
    expect(res.errors).toBeUndefined();
    return res.data!.entity.summary;
  };

  const rebuilt = async (key: string, by: (s: Summary) => boolean): Promise<Summary> => {
    const queued = await gw.gql(`mutation { rebuildSummaries(namespace: "${NS}") }`);
    expect(queued.errors).toBeUndefined();
    for (let i = 0; i < 100; i++) {
      const s = await summaryOf(key);
      if (s.stored && !s.stale && by(s)) return s;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no rebuilt summary of ${key}`);
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(
      {
        MEMGATE_LLM: 'openai:summary-test',
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: 'test',
        MEMGATE_SUMMARIES: '1',
      },
      { extractionWorker: false },
    );
    await upsertEntities(gw, NS, [
      { key: 'person:lena', kind: 'person', title: 'Lena Ortiz', attributes: { email: 'lena@example.com' } },
      { key: 'project:falcon', kind: 'project', title: 'Project Falcon', attributes: { status: 'building' } },
    ]);
    [lead] = await assertFacts(gw, NS, [
      {
        subject: 'person:lena',
        predicate: 'LEADS',
        object: 'project:falcon',
        validFrom: '2024-10-08T09:00:00Z',
      },
    ]);
  });

  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('rests on exactly the statements the model cites', async () => {
    fake.handle((r) => {
      if (!isSummaryRequest(r)) return { status: 500 };
      const tag = tagOf(r, 'LEADS');
      return {
        content: JSON.stringify({ summary: `Lena Ortiz leads Project Falcon [${tag}].`, cites: [tag] }),
      };
    });
    const s = await rebuilt('project:falcon', (x) => x.by !== 'extractive');
    expect(s.by).toBe('openai:summary-test');
    expect(s.text).toMatch(
      /^Project Falcon \(project\), as of \d{4}-\d{2}-\d{2}:\nLena Ortiz leads Project Falcon \[F1\]\.$/,
    );
    expect(s.facts.map((f) => f.factId)).toEqual([lead]);
    expect(s.observations).toEqual([]);
  });

  it('masks personal data in what it sends', async () => {
    const prompts = fake.requests.filter(isSummaryRequest).map((r) => r.messages[1]!.content);
    const lena = prompts.find((p) => p.startsWith('Entity: Lena Ortiz'));
    expect(lena).toBeDefined();
    expect(lena).not.toContain('lena@example.com');
    expect(lena).toContain('[email]');
  });

  it('keeps the extractive summary when the answer is refused or the call fails', async () => {
    fake.handle((r) =>
      isSummaryRequest(r)
        ? { content: JSON.stringify({ summary: 'Falcon is fine.', cites: [] }) }
        : { status: 500 },
    );
    const refused = await rebuilt('project:falcon', (x) => x.by === 'extractive');
    expect(refused.text).toContain('Lena Ortiz LEADS Project Falcon (since 2024-10-08)');
    fake.handle(() => ({ raw: 'not json at all' }));
    const broken = await rebuilt('project:falcon', (x) => x.by === 'extractive');
    expect(broken.text).toContain('- status: building');
  });
});
