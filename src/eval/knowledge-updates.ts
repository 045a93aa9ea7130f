import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { App } from '../app.js';
import { openEvalApp } from './eval-app.js';

/**
 * The knowledge-update harness: scenarios whose facts, attributes and statements change over
 * time, written through the public GraphQL API the way clients write them (supersessions,
 * asserted facts, attribute versions with validFrom, messages, documents), then asked what
 * holds now, what held at an earlier instant, and what held before. A question counts when one
 * of its expected values is in the answer and comes before every outdated value; an as-of
 * question also fails when a value of its future appears at all. Each scenario is written twice:
 * with its timestamps, and with every message of a day stamped alike (the day's midnight), as
 * clients that stamp a whole export or batch once send them (facts and attributes keep their
 * validFrom).
 */

const factSchema = z.object({
  id: z.string(),
  subject: z.string(),
  predicate: z.string(),
  object: z.string(),
});
const stepSchema = z.object({
  at: z.string(),
  entities: z.array(z.record(z.string(), z.unknown())).optional(),
  fact: factSchema.optional(),
  supersede: z.object({ of: z.string(), by: factSchema }).optional(),
  observation: z.object({ id: z.string(), actor: z.string(), content: z.string() }).optional(),
  document: z
    .object({ key: z.string(), title: z.string(), content: z.string(), links: z.array(z.string()) })
    .optional(),
});
const questionSchema = z.object({
  question: z.string(),
  kind: z.enum(['current', 'asOf', 'history']),
  asOf: z.string().optional(),
  expect: z.array(z.string()).min(1),
  /** Values that held before: they may follow the answer, never precede it. */
  outdated: z.array(z.string()),
  /** As-of questions: values that only held later, never shown. */
  future: z.array(z.string()).default([]),
});
const setSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  scenarios: z.array(
    z.object({
      id: z.string(),
      description: z.string().optional(),
      steps: z.array(stepSchema),
      questions: z.array(questionSchema),
    }),
  ),
});
export type UpdateSet = z.infer<typeof setSchema>;
type Scenario = UpdateSet['scenarios'][number];
type Question = z.infer<typeof questionSchema>;

export function readUpdateSet(file: string): UpdateSet {
  return setSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** `text@400`: the 400-token pack's texts alone (messages, documents): knowledge updates in text. */
/**
 * `summary`: the summaries (Entity.summary at the question's asOf) of the entities the question
 * names, line by line; asked of current and as-of questions (a summary is not a history).
 */
export type Reader = 'context@400' | 'context@2000' | 'search@10' | 'text@400' | 'summary';
export const READERS: readonly Reader[] = ['context@400', 'context@2000', 'search@10', 'text@400', 'summary'];
const TEXT_SECTIONS = new Set(['RECENT_OBSERVATIONS', 'DOCUMENTS', 'EPISODES']);

export interface QuestionOutcome {
  scenario: string;
  question: string;
  kind: Question['kind'];
  asOf: string | null;
  ok: boolean;
  /** Why it failed: missing, outdated first, future shown. */
  reason: string | null;
}

export interface UpdateRun {
  /** The reader and the timestamps, e.g. `context@400 distinct`. */
  label: string;
  timestamps: 'distinct' | 'equal';
  reader: Reader;
  total: number;
  ok: number;
  byKind: Record<string, { total: number; ok: number }>;
  misses: QuestionOutcome[];
  /**
   * Equal timestamps: as-of questions asked inside a day whose later messages the stamping moved
   * before asOf (memory then holds them at asOf, by the time the client gave) — not asked.
   */
  skipped: number;
  /** currentFirst: the share of questions whose current (or as-of) answer is served before any outdated one. */
  overall: { currentFirst: number };
}

/** Whether stamping a day's messages alike moves one that came after `asOf` to before it. */
function movedBefore(s: Scenario, asOf: string | undefined): boolean {
  if (!asOf) return false;
  const at = Date.parse(asOf);
  return s.steps.some(
    (step) =>
      (step.observation || step.document) &&
      Date.parse(step.at) > at &&
      Date.parse(flooredToDay(step.at)) <= at,
  );
}

export interface UpdateReport {
  file: string;
  backend: string;
  embedder: string;
  scenarios: number;
  questions: number;
  runs: UpdateRun[];
  createdAt: string;
}

/**
 * Judges one answer, its items in the order served (pack items section by section, search hits
 * by rank). The first item that names any value of the question must name an expected one (a
 * message announcing a change names both, and answers); an as-of question fails if any item
 * names a value of its future; a history question needs every expected value somewhere.
 */
export function judge(
  items: readonly string[],
  q: Pick<Question, 'kind' | 'expect' | 'outdated' | 'future'>,
): string | null {
  const texts = items.map((t) => t.toLowerCase());
  const names = (text: string, values: readonly string[]) =>
    values.some((v) => text.includes(v.toLowerCase()));
  if (q.kind === 'history')
    return q.expect.every((v) => texts.some((t) => t.includes(v.toLowerCase()))) ? null : 'missing';
  if (texts.some((t) => names(t, q.future))) return 'future shown';
  const first = texts.find((t) => names(t, q.expect) || names(t, q.outdated));
  if (first === undefined) return 'missing';
  return names(first, q.expect) ? null : 'outdated first';
}

class Client {
  constructor(private readonly app: App) {}

  async gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const res = await this.app.gateway.fetch('http://eval.local/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
    return body.data as T;
  }
}

const PAYLOAD = 'accepted rejected results { index status key code message }';
type Payload = {
  accepted: number;
  rejected: number;
  results: { key: string | null; message: string | null }[];
};

function flooredToDay(iso: string): string {
  return `${iso.slice(0, 10)}T00:00:00Z`;
}

/** Writes a scenario through the API; returns nothing, throws on a rejected write. */
async function writeScenario(client: Client, ns: string, s: Scenario, equal: boolean): Promise<void> {
  const factIds = new Map<string, string>();
  const check = (p: Payload, what: string) => {
    if (p.rejected > 0) throw new Error(`${what} rejected: ${JSON.stringify(p.results)}`);
    return p;
  };
  for (const step of s.steps) {
    // Equal timestamps are the turns' (messages, documents): facts and attributes keep their validity.
    const turn = Boolean(step.observation || step.document);
    const at = equal && turn ? flooredToDay(step.at) : step.at;
    if (step.entities) {
      const entities = step.entities.map((e) => ({ ...e, validFrom: at }));
      const r = await client.gql<{ upsertEntities: Payload }>(
        `mutation($ns: String!, $e: [EntityInput!]!) { upsertEntities(namespace: $ns, entities: $e) { ${PAYLOAD} } }`,
        { ns, e: entities },
      );
      check(r.upsertEntities, 'entities');
    }
    if (step.fact) {
      const { id, ...fact } = step.fact;
      const r = await client.gql<{ assertFacts: Payload }>(
        `mutation($ns: String!, $f: [FactInput!]!) { assertFacts(namespace: $ns, facts: $f) { ${PAYLOAD} } }`,
        { ns, f: [{ ...fact, validFrom: at }] },
      );
      factIds.set(id, check(r.assertFacts, 'fact').results[0]!.key!);
    }
    if (step.supersede) {
      const { id, ...by } = step.supersede.by;
      const r = await client.gql<{ supersedeFact: Payload }>(
        `mutation($ns: String!, $id: String!, $by: FactInput!) { supersedeFact(namespace: $ns, factId: $id, by: $by) { ${PAYLOAD} } }`,
        { ns, id: factIds.get(step.supersede.of), by: { ...by, validFrom: at } },
      );
      factIds.set(id, check(r.supersedeFact, 'supersession').results[0]!.key!);
    }
    if (step.observation) {
      const o = step.observation;
      const r = await client.gql<{ recordObservations: Payload }>(
        `mutation($ns: String!, $o: [ObservationInput!]!) { recordObservations(namespace: $ns, observations: $o) { ${PAYLOAD} } }`,
        {
          ns,
          o: [
            {
              source: { system: 'chat', stream: s.id, externalId: o.id },
              kind: 'message',
              occurredAt: at,
              actor: { type: 'person', id: o.actor },
              content: o.content,
            },
          ],
        },
      );
      check(r.recordObservations, 'observation');
    }
    if (step.document) {
      const r = await client.gql<{ retainDocuments: Payload }>(
        `mutation($ns: String!, $d: [DocumentInput!]!) { retainDocuments(namespace: $ns, documents: $d) { ${PAYLOAD} } }`,
        { ns, d: [step.document] },
      );
      check(r.retainDocuments, 'document');
    }
  }
}

/** The entities of a scenario a question names: a title, or its first or last word, as a whole word. */
export function namedEntities(s: Scenario, q: Pick<Question, 'question' | 'expect' | 'outdated'>): string[] {
  const question = ` ${q.question.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
  const values = [...q.expect, ...q.outdated].map((v) => v.toLowerCase());
  const keys: string[] = [];
  for (const e of s.steps.flatMap((step) => step.entities ?? [])) {
    if (typeof e.key !== 'string' || typeof e.title !== 'string') continue;
    const key = e.key;
    const title = e.title
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
    // An entity whose title is an answer is what the question asks for, not what it is about.
    if (values.some((v) => title.includes(v) || v.includes(title))) continue;
    const words = title.split(/\s+/).filter((w: string) => w.length > 2);
    const names = [title, words[0], words[words.length - 1]].filter((n): n is string => Boolean(n));
    if (names.some((n) => question.includes(` ${n} `) || question.includes(` ${n}s `)) && !keys.includes(key))
      keys.push(key);
  }
  return keys;
}

async function summaryLines(client: Client, ns: string, keys: readonly string[], asOf: string | null) {
  const lines: string[] = [];
  for (const key of keys) {
    const r = await client.gql<{ entity: { summary: { text: string } | null } | null }>(
      'query($ns: String!, $key: String!, $asOf: DateTime) { entity(namespace: $ns, key: $key) { summary(asOf: $asOf) { text } } }',
      { ns, key, asOf },
    );
    lines.push(...(r.entity?.summary?.text.split('\n') ?? []));
  }
  return lines;
}

/** Waits until the namespace's summaries are all built (the refresher runs in the background). */
async function summariesSettled(client: Client, ns: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const r = await client.gql<{ summaryStatus: { pending: number; entities: number } }>(
      'query($ns: String!) { summaryStatus(namespace: $ns) { pending entities } }',
      { ns },
    );
    if (r.summaryStatus.pending === 0 && r.summaryStatus.entities > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the summaries of ${ns} were not built within 30 s`);
}

async function answerItems(
  client: Client,
  ns: string,
  q: Question,
  reader: Reader,
  s: Scenario,
): Promise<string[]> {
  const asOf = q.asOf ?? null;
  if (reader === 'summary') return summaryLines(client, ns, namedEntities(s, q), asOf);
  if (reader === 'search@10') {
    const r = await client.gql<{ search: { hits: { chunk: { text: string } }[] } }>(
      'query($i: SearchInput!) { search(input: $i) { hits { chunk { text } } } }',
      { i: { namespaces: [ns], query: q.question, k: 10, asOf } },
    );
    return r.search.hits.map((h) => h.chunk.text);
  }
  const budgetTokens = reader === 'context@2000' ? 2000 : 400;
  const r = await client.gql<{ context: { sections: { kind: string; items: { text: string }[] }[] } }>(
    'query($i: ContextInput!) { context(input: $i) { sections { kind items { text } } } }',
    { i: { namespaces: [ns], query: q.question, budgetTokens, asOf } },
  );
  const sections =
    reader === 'text@400' ? r.context.sections.filter((s) => TEXT_SECTIONS.has(s.kind)) : r.context.sections;
  return sections.flatMap((s) => s.items.map((i) => i.text));
}

export async function runUpdateEval(options: {
  file: string;
  dataDir: string;
  databaseUrl?: string;
  log?: (m: string) => void;
}): Promise<UpdateReport> {
  const log = options.log ?? (() => {});
  const set = readUpdateSet(options.file);
  const app = await openEvalApp({ dataDir: options.dataDir, databaseUrl: options.databaseUrl, log });
  const client = new Client(app);
  const runs: UpdateRun[] = [];
  try {
    for (const timestamps of ['distinct', 'equal'] as const) {
      const outcomes = new Map<Reader, QuestionOutcome[]>(READERS.map((r) => [r, []]));
      let skipped = 0;
      for (const s of set.scenarios) {
        const ns = `eval-updates-${s.id}-${timestamps}`;
        await writeScenario(client, ns, s, timestamps === 'equal');
        await summariesSettled(client, ns);
        for (const q of s.questions) {
          if (timestamps === 'equal' && movedBefore(s, q.asOf)) {
            skipped += 1;
            continue;
          }
          for (const reader of READERS) {
            if (reader === 'summary' && q.kind === 'history') continue;
            const reason = judge(await answerItems(client, ns, q, reader, s), q);
            outcomes.get(reader)!.push({
              scenario: s.id,
              question: q.question,
              kind: q.kind,
              asOf: q.asOf ?? null,
              ok: reason === null,
              reason,
            });
          }
        }
      }
      for (const reader of READERS) {
        const list = outcomes.get(reader)!;
        const byKind: UpdateRun['byKind'] = {};
        for (const o of list) {
          const k = byKind[o.kind] ?? { total: 0, ok: 0 };
          byKind[o.kind] = k;
          k.total += 1;
          if (o.ok) k.ok += 1;
        }
        const ok = list.filter((o) => o.ok).length;
        const run: UpdateRun = {
          label: `${reader} ${timestamps}`,
          timestamps,
          reader,
          total: list.length,
          ok,
          overall: { currentFirst: list.length === 0 ? 0 : ok / list.length },
          byKind,
          misses: list.filter((o) => !o.ok),
          skipped,
        };
        runs.push(run);
        log(`${timestamps} ${reader}: ${run.ok}/${run.total}`);
      }
    }
    return {
      file: options.file,
      backend: app.deps.db.backend,
      embedder: app.deps.embedder.model,
      scenarios: set.scenarios.length,
      questions: set.scenarios.reduce((n, s) => n + s.questions.length, 0),
      runs,
      createdAt: new Date().toISOString(),
    };
  } finally {
    await app.close();
  }
}

const share = (ok: number, total: number) => (total === 0 ? '–' : (ok / total).toFixed(3));

export function formatUpdateReport(r: UpdateReport): string {
  const lines = [
    `Knowledge updates (${r.scenarios} scenarios, ${r.questions} questions; ${r.backend}, embedder ${r.embedder})`,
    'share of questions whose current (or as-of) value is in the answer and comes before any outdated one',
    'timestamps  reader         overall  current  as-of  history  not asked',
    '----------  -------------  -------  -------  -----  -------  ---------',
  ];
  for (const run of r.runs) {
    const k = (name: string) => share(run.byKind[name]?.ok ?? 0, run.byKind[name]?.total ?? 0);
    lines.push(
      `${run.timestamps.padEnd(10)}  ${run.reader.padEnd(13)}  ${share(run.ok, run.total).padStart(7)}  ${k('current').padStart(7)}  ${k('asOf').padStart(5)}  ${k('history').padStart(7)}  ${String(run.skipped).padStart(9)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
