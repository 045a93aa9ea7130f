import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import { cli } from '../helpers/cli.js';
import {
  type ChatRequest,
  type FakeOpenAI,
  type FakeReply,
  extractionMessages,
  startFakeOpenAI,
} from '../helpers/fake-openai.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { openFromTemplate, openTestDatabase, TEST_EMBEDDING } from '../helpers/test-database.js';
import { RECORD, factsOf, message, setUpTeamNamespace } from '../graphql/extraction-fixture.js';

/**
 * `memgate extract` as an operator runs it, a process of its own: over observations recorded
 * while the gateway had no model (nothing queued) and the namespace no domain pack (no rule
 * read them), it re-reads them with the rules and, with MEMGATE_LLM set, through the model
 * queue until it is empty, and prints what it did. `--since` limits the re-read to what was
 * recorded from then on; bad arguments exit 2 with the usage.
 */

const NS = 'extract-cli';
const dir = mkdtempSync(join(tmpdir(), 'memgate-extract-cli-'));

/** Where the CLI processes find the database, and a way for the test to open it in between. */
let env: Record<string, string>;
let open: () => Promise<Database>;
let cleanup: () => Promise<void> = async () => undefined;
let fake: FakeOpenAI;

/** Recorded first (before `--since`), then later, one per line: who works on what, who mentors whom. */
const EARLIER = [
  ['Alice', 'Orion', 'Bob'],
  ['Carol', 'Vega', 'Dan'],
  ['Erik', 'Lyra', 'Fay'],
] as const;
const LATER = [
  ['Gina', 'Orion', 'Hugo'],
  ['Ivan', 'Vega', 'Jana'],
] as const;
const textOf = ([who, project, mentee]: readonly string[]) =>
  `${who} works on ${project}. ${who} mentors ${mentee}.`;

/** Observation ids by the person the text is about. */
const observationOf = new Map<string, string>();
let since = '';

/**
 * The model reads "X mentors Y" (the team pack's rules do not), so every INFERRED fact here is
 * the model's and every EXTRACTED one the rules'.
 */
function answerFromPrompt(request: ChatRequest): FakeReply {
  const facts = extractionMessages(request).flatMap(({ n, text }) =>
    [...text.matchAll(/(\p{Lu}\p{Ll}+) mentors (\p{Lu}\p{Ll}+)/gu)].map((m) => ({
      message: n,
      subject: m[1]!,
      subjectKind: 'person',
      predicate: 'mentors',
      object: m[2]!,
      objectKind: 'person',
      confidence: 0.7,
    })),
  );
  return {
    content: JSON.stringify({ facts, attributes: [] }),
    usage: { prompt_tokens: 120, completion_tokens: 30 },
  };
}

/** An in-process gateway on the database while no CLI process has it. */
async function withGateway<T>(use: (gw: TestGateway) => Promise<T>): Promise<T> {
  const gw = await startTestGateway({}, { db: await open() });
  try {
    return await use(gw);
  } finally {
    await gw.close();
  }
}

const extract = (args: string[]) =>
  cli(['extract', ...args], {
    ...env,
    MEMGATE_LLM: 'openai:extract-test',
    OPENAI_BASE_URL: fake.url,
    MEMGATE_PROGRESS_MS: '0',
  });

beforeAll(async () => {
  const common = { MEMGATE_EMBEDDER: TEST_EMBEDDING.model };
  if (process.env.DATABASE_URL) {
    const db = await openTestDatabase();
    const url = db.url!;
    env = { ...common, DATABASE_URL: url };
    open = () => openPostgres({ connectionString: url, statementTimeoutMs: 30_000 });
    cleanup = () => db.close();
  } else {
    const dataDir = join(dir, 'data');
    const seed = await openFromTemplate(join(dataDir, 'pgdata'));
    await seed.close();
    env = { ...common, MEMGATE_DATA_DIR: dataDir };
    open = () => openPglite({ dataDir: join(dataDir, 'pgdata') });
  }
  fake = await startFakeOpenAI(answerFromPrompt);

  // Recorded by a gateway without a model, in a namespace without packs: nothing is read yet.
  await withGateway(async (gw) => {
    const record = async (rows: readonly (readonly string[])[]) => {
      const res = await gw.gql<{ recordObservations: { accepted: number; results: { key: string }[] } }>(
        RECORD,
        { ns: NS, items: rows.map((r) => message('standup', textOf(r), 'scribe')) },
      );
      expect(res.errors).toBeUndefined();
      expect(res.data!.recordObservations.accepted).toBe(rows.length);
      for (const [i, r] of res.data!.recordObservations.results.entries())
        observationOf.set(rows[i]![0]!, r.key);
    };
    await record(EARLIER);
    await new Promise((r) => setTimeout(r, 200));
    await record(LATER);
    const { rows } = await gw.db.query<{ earlier: Date; later: Date }>(
      `SELECT max(recorded_at) FILTER (WHERE observation_id = ANY($2::text[])) AS earlier,
              min(recorded_at) FILTER (WHERE observation_id <> ALL($2::text[])) AS later
       FROM observations WHERE namespace = $1`,
      [NS, EARLIER.map(([who]) => observationOf.get(who)!)],
    );
    const { earlier, later } = rows[0]!;
    expect(later.getTime() - earlier.getTime()).toBeGreaterThan(100);
    since = new Date((earlier.getTime() + later.getTime()) / 2).toISOString();

    const before = await gw.db.query<{ facts: number; jobs: number }>(
      `SELECT (SELECT count(*)::int FROM facts WHERE namespace = $1) AS facts,
              (SELECT count(*)::int FROM extraction_jobs WHERE namespace = $1) AS jobs`,
      [NS],
    );
    expect(before.rows[0]).toEqual({ facts: 0, jobs: 0 });
    await setUpTeamNamespace(gw, NS);
  });
}, 120_000);

afterAll(async () => {
  await fake?.close();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Who works on what (EXTRACTED, by the rules) and mentors whom (INFERRED, by the model), citing the one text. */
async function expectReadOnce(gw: TestGateway, [who, project, mentee]: readonly string[]): Promise<void> {
  const cited = [{ observationId: observationOf.get(who!)!, content: textOf([who!, project!, mentee!]) }];
  const facts = await factsOf(gw, NS, `person:${who!.toLowerCase()}`);
  expect(
    facts
      .map((f) => ({
        predicate: f.predicate,
        evidence: f.evidence,
        object: f.object.key,
        observations: f.observations,
        by: f.attributes.learned?.by,
      }))
      .sort((a, b) => a.predicate.localeCompare(b.predicate)),
  ).toEqual([
    {
      predicate: 'mentors',
      evidence: 'INFERRED',
      object: `person:${mentee!.toLowerCase()}`,
      observations: cited,
      by: 'model',
    },
    {
      predicate: 'works_on',
      evidence: 'EXTRACTED',
      object: `project:${project!.toLowerCase()}`,
      observations: cited,
      by: 'rule',
    },
  ]);
}

describe('memgate extract', () => {
  it('exits 2 with the usage on stderr without --namespace or with a --since that is not a date', async () => {
    const missing = await extract([]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--namespace is required');
    expect(missing.stderr).toContain('Usage: memgate extract --namespace NS');
    expect(missing.stdout).toBe('');

    const bad = await extract(['--namespace', NS, '--since', 'last-tuesday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since last-tuesday is not a date');
    expect(bad.stderr).toContain('Usage: memgate extract --namespace NS');
    expect(bad.stdout).toBe('');
    expect(fake.requests).toHaveLength(0);
  });

  it('--since re-reads only what was recorded from then on, by the rules and through the model', async () => {
    const result = await extract(['--namespace', NS, '--since', since]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'read 2 observations with the rules; 2 queued for the model\n' +
        '2 done, 0 queued (waiting for a retry), 0 running (leased by another process), 0 failed; 2 facts written by the model; tokens in 120, out 30\n',
    );
    // One model call, for the later session's two texts only.
    expect(fake.requests.map((r) => extractionMessages(r).map((m) => m.text))).toEqual([LATER.map(textOf)]);

    await withGateway(async (gw) => {
      const jobs = await gw.db.query<{ source_id: string; status: string }>(
        `SELECT source_id, status FROM extraction_jobs WHERE namespace = $1 ORDER BY source_id`,
        [NS],
      );
      expect(jobs.rows).toEqual(
        LATER.map(([who]) => ({ source_id: observationOf.get(who)!, status: 'DONE' })).sort((a, b) =>
          a.source_id.localeCompare(b.source_id),
        ),
      );
      for (const row of LATER) await expectReadOnce(gw, row);
      for (const [who] of EARLIER) expect(await factsOf(gw, NS, `person:${who.toLowerCase()}`)).toEqual([]);
    });
  });

  it('without --since re-reads the whole namespace, and what was read before is not written twice', async () => {
    fake.requests.length = 0;
    const result = await extract(['--namespace', NS]);
    expect(result.code, result.stderr).toBe(0);
    // Every text is queued again, the later ones too; factsWritten counts the last run of each job.
    expect(result.stdout).toBe(
      'read 5 observations with the rules; 5 queued for the model\n' +
        '5 done, 0 queued (waiting for a retry), 0 running (leased by another process), 0 failed; 5 facts written by the model; tokens in 240, out 60\n',
    );
    expect(fake.requests).toHaveLength(1);
    expect(extractionMessages(fake.requests[0]!).map((m) => m.text)).toEqual(
      [...EARLIER, ...LATER].map(textOf),
    );

    await withGateway(async (gw) => {
      for (const row of [...EARLIER, ...LATER]) await expectReadOnce(gw, row);
      const { rows } = await gw.db.query<{ evidence: string; n: number }>(
        `SELECT evidence, count(*)::int AS n FROM facts WHERE namespace = $1 GROUP BY evidence ORDER BY evidence`,
        [NS],
      );
      expect(rows).toEqual([
        { evidence: 'EXTRACTED', n: 5 },
        { evidence: 'INFERRED', n: 5 },
      ]);
    });
  });
});
