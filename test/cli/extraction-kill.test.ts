import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exitOf, killGatewayProcesses, startGatewayProcess } from '../helpers/gateway-process.js';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import {
  type ChatRequest,
  type FakeOpenAI,
  type FakeReply,
  extractionMessages,
  startFakeOpenAI,
} from '../helpers/fake-openai.js';
import { openFromTemplate, openTestDatabase } from '../helpers/test-database.js';
import { RECORD } from '../graphql/extraction-fixture.js';

/**
 * kill -9 of a real gateway process while its model-extraction worker is part-way through the
 * queue: the batch in flight wrote nothing, and a second process on the same database finishes
 * the queue — every job DONE, none lost or dead, each text's fact written exactly once and citing
 * the text it was read from. The fake model reads "<name> works on <project>" out of the prompt,
 * so every fact can be checked against its observation's text.
 */

const NS = 'extraction-kill';
const OBSERVATIONS = 1000;
const PER_REQUEST = 100;
/** How long the model takes per batch: long enough that the kill lands with most of the queue left. */
const MODEL_DELAY_MS = 300;

// 40 people × 25 projects: every text states a pair no other text states.
const PEOPLE = (
  'Ada Boris Clara Dmitri Elena Felix Greta Hector Irene Jonas Katya Lars Mira Nikolai Olga ' +
  'Pavel Quinn Rosa Stefan Tamara Ulrich Vera Walter Xenia Yuri Zora Anton Bianca Cyril ' +
  'Daria Emil Freya Gleb Hanna Igor Julia Kirill Lena Marek Nadia'
).split(' ');
const PROJECTS = (
  'Orion Vega Lyra Altair Deneb Rigel Sirius Polaris Castor Pollux Antares Spica Mizar Alcor ' +
  'Capella Procyon Regulus Bellatrix Betelgeuse Aldebaran Arcturus Canopus Achernar ' +
  'Fomalhaut Hadar'
).split(' ');
const textOf = (person: string, project: string) =>
  `Morning update: ${person} works on ${project} this week.`;

function observation(i: number) {
  return {
    source: { system: 'chat', stream: `standup-${i % 25}`, externalId: `m${i}` },
    kind: 'message',
    occurredAt: new Date(Date.UTC(2025, 1, 3, 9) + i * 60_000).toISOString(),
    actor: { type: 'person', id: 'scribe' },
    content: textOf(PEOPLE[i % PEOPLE.length]!, PROJECTS[Math.floor(i / PEOPLE.length)]!),
  };
}

/** Reads each message of the prompt as the test's model would: one fact per "X works on Y". */
function answerOf(request: ChatRequest): FakeReply {
  const facts = extractionMessages(request).flatMap(({ n, text }) =>
    [...text.matchAll(/(\p{Lu}\p{Ll}+) works on (\p{Lu}\p{Ll}+)/gu)].map((m) => ({
      message: n,
      subject: m[1]!,
      subjectKind: 'person',
      predicate: 'works_on',
      object: m[2]!,
      objectKind: 'project',
      confidence: 0.7,
    })),
  );
  return {
    content: JSON.stringify({ facts, attributes: [] }),
    usage: { prompt_tokens: 50, completion_tokens: 20 },
  };
}

interface Location {
  env: Record<string, string>;
  /** A connection of the test's own; on PGlite only while no gateway process holds the folder. */
  open(): Promise<Database>;
  cleanup(): Promise<void>;
}

/** A database the gateway processes share: a PGlite data folder, or a native test database. */
async function freshLocation(): Promise<Location> {
  if (process.env.DATABASE_URL) {
    const db = await openTestDatabase();
    const url = db.url!;
    return {
      env: { DATABASE_URL: url },
      open: () => openPostgres({ connectionString: url, statementTimeoutMs: 30_000 }),
      cleanup: () => db.close(),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'memgate-extraction-kill-'));
  const dataDir = join(dir, 'data');
  const seed = await openFromTemplate(join(dataDir, 'pgdata'));
  await seed.close();
  return {
    env: { MEMGATE_DATA_DIR: dataDir },
    open: () => openPglite({ dataDir: join(dataDir, 'pgdata') }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function using<T>(location: Location, read: (db: Database) => Promise<T>): Promise<T> {
  const db = await location.open();
  try {
    return await read(db);
  } finally {
    await db.close();
  }
}

async function gql<T>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data?: T; errors?: unknown[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: T; errors?: unknown[] };
}

interface Status {
  queued: number;
  running: number;
  done: number;
  failed: number;
}

async function status(url: string): Promise<Status> {
  const answer = await gql<{ extractionStatus: Status }>(
    url,
    `query($ns: String!) { extractionStatus(namespace: $ns) { queued running done failed } }`,
    { ns: NS },
  );
  expect(answer.errors).toBeUndefined();
  return answer.data!.extractionStatus;
}

async function waitFor<T>(read: () => Promise<T>, until: (value: T) => boolean, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() - started > 120_000)
      throw new Error(`${what}: not reached; last ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Jobs of the namespace by status, and the facts it holds. */
async function jobsAndFacts(db: Database) {
  const jobs = await db.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM extraction_jobs WHERE namespace = $1 GROUP BY status`,
    [NS],
  );
  const running = await db.query<{ source_id: string }>(
    `SELECT source_id FROM extraction_jobs WHERE namespace = $1 AND status = 'RUNNING' ORDER BY source_id`,
    [NS],
  );
  const facts = await db.query<{ n: number; cited: string[] }>(
    `SELECT count(*)::int AS n, coalesce(array_agg(DISTINCT o.id), '{}') AS cited
     FROM facts f LEFT JOIN LATERAL unnest(f.observation_ids) AS o(id) ON true
     WHERE f.namespace = $1`,
    [NS],
  );
  return {
    byStatus: Object.fromEntries(jobs.rows.map((r) => [r.status, r.n])) as Record<string, number>,
    running: running.rows.map((r) => r.source_id),
    facts: facts.rows[0]!,
  };
}

afterEach(killGatewayProcesses);

describe('kill -9 during model extraction', () => {
  it('loses and duplicates nothing: a second gateway process finishes the queue, each fact once, citing its text', async () => {
    const location = await freshLocation();
    let fake: FakeOpenAI | undefined;
    try {
      // Armed once the queue is under way: the next model call kills the process that made it.
      let killOnNextCall: (() => void) | null = null;
      fake = await startFakeOpenAI((request) => {
        const kill = killOnNextCall;
        killOnNextCall = null;
        kill?.();
        return { delayMs: MODEL_DELAY_MS, reply: answerOf(request) };
      });
      const env = { ...location.env, MEMGATE_LLM: 'openai:extract-test', OPENAI_BASE_URL: fake.url };

      const started = Date.now();
      const first = await startGatewayProcess(env);
      const ids: string[] = [];
      for (let from = 0; from < OBSERVATIONS; from += PER_REQUEST) {
        const items = Array.from({ length: PER_REQUEST }, (_, k) => observation(from + k));
        const res = await gql<{ recordObservations: { accepted: number; results: { key: string }[] } }>(
          first.url,
          RECORD,
          { ns: NS, items },
        );
        expect(res.errors).toBeUndefined();
        expect(res.data!.recordObservations.accepted).toBe(PER_REQUEST);
        ids.push(...res.data!.recordObservations.results.map((r) => r.key));
      }
      const recorded = Date.now();
      await waitFor(
        () => status(first.url),
        (s) => s.done > 0,
        'a first batch read by the model',
      );
      const killed = new Promise<void>((resolve) => {
        killOnNextCall = () => {
          first.child.kill('SIGKILL');
          resolve();
        };
      });
      await killed;
      expect((await exitOf(first.child)).signal).toBe('SIGKILL');
      const killedAt = Date.now();

      // The kill landed mid-queue, with one batch in flight that wrote nothing.
      const midway = await using(location, jobsAndFacts);
      expect(midway.byStatus.DONE).toBeGreaterThan(0);
      expect(midway.running.length).toBeGreaterThan(0);
      expect(midway.running.length).toBeLessThanOrEqual(20);
      expect(midway.byStatus.DONE! + midway.running.length).toBeLessThan(OBSERVATIONS);
      expect(midway.byStatus.DEAD).toBeUndefined();
      expect(midway.facts.n).toBe(midway.byStatus.DONE);
      expect(midway.facts.cited.filter((id) => midway.running.includes(id))).toEqual([]);

      // An embedded data folder has one process: the next one queues the dead one's batch again
      // at start. A shared server may have other live gateways, so there the lease (300 s) must
      // run out; the test makes it run out now rather than wait.
      if (process.env.DATABASE_URL) {
        await using(location, (db) =>
          db.query(
            `UPDATE extraction_jobs SET locked_until = now() - interval '1 second'
             WHERE namespace = $1 AND status = 'RUNNING'`,
            [NS],
          ),
        );
      }

      const second = await startGatewayProcess(env);
      const after = await waitFor(
        () => status(second.url),
        (s) => s.queued === 0 && s.running === 0,
        'the queue finished by the second process',
      );
      expect(after).toEqual({ queued: 0, running: 0, done: OBSERVATIONS, failed: 0 });
      const finished = Date.now();
      second.child.kill('SIGTERM');
      (await exitOf(second.child)).signal;

      await using(location, async (db) => {
        const jobs = await db.query<{
          source_id: string;
          status: string;
          attempts: number;
          facts_written: number;
        }>(`SELECT source_id, status, attempts, facts_written FROM extraction_jobs WHERE namespace = $1`, [
          NS,
        ]);
        expect(jobs.rows).toHaveLength(OBSERVATIONS);
        expect(new Set(jobs.rows.map((j) => j.source_id))).toEqual(new Set(ids));
        expect(jobs.rows.filter((j) => j.status !== 'DONE')).toEqual([]);
        // Each batch's facts are counted once: no batch was written twice.
        expect(jobs.rows.reduce((sum, j) => sum + j.facts_written, 0)).toBe(OBSERVATIONS);
        // The batch in flight at the kill was taken again, once.
        expect(jobs.rows.filter((j) => midway.running.includes(j.source_id)).map((j) => j.attempts)).toEqual(
          midway.running.map(() => 2),
        );

        const facts = await db.query<{
          fact_id: string;
          subject: string;
          predicate: string;
          object: string;
          evidence: string;
          observation_ids: string[];
          person: string | null;
          project: string | null;
        }>(
          `SELECT f.fact_id, f.subject, f.predicate, f.object, f.evidence, f.observation_ids,
                  s.title AS person, o.title AS project
           FROM facts f
           LEFT JOIN entities s ON s.namespace = f.namespace AND s.key = f.subject
           LEFT JOIN entities o ON o.namespace = f.namespace AND o.key = f.object
           WHERE f.namespace = $1`,
          [NS],
        );
        const contents = await db.query<{ observation_id: string; content: string }>(
          `SELECT observation_id, content FROM observations WHERE namespace = $1`,
          [NS],
        );
        const contentOf = new Map(contents.rows.map((r) => [r.observation_id, r.content]));

        // One fact per text, no more: 1,000 facts, 1,000 distinct statements, each citing one text.
        expect(facts.rows).toHaveLength(OBSERVATIONS);
        expect(new Set(facts.rows.map((f) => `${f.subject} ${f.predicate} ${f.object}`)).size).toBe(
          OBSERVATIONS,
        );
        expect(facts.rows.filter((f) => f.evidence !== 'INFERRED' || f.predicate !== 'works_on')).toEqual([]);
        expect(facts.rows.filter((f) => f.observation_ids.length !== 1)).toEqual([]);
        expect(new Set(facts.rows.flatMap((f) => f.observation_ids))).toEqual(new Set(ids));
        // Every fact cites the text that states it.
        const miscited = facts.rows.filter(
          (f) => contentOf.get(f.observation_ids[0]!) !== textOf(f.person ?? '?', f.project ?? '?'),
        );
        expect(miscited).toEqual([]);
      });

      console.info(
        `extraction kill (${process.env.DATABASE_URL ? 'native PostgreSQL' : 'PGlite'}): ` +
          `recorded ${OBSERVATIONS} in ${recorded - started} ms (first process start included); ` +
          `killed with ${midway.byStatus.DONE} done, ${midway.running.length} in flight after ${killedAt - started} ms; ` +
          `second process finished in ${finished - killedAt} ms; ${fake.requests.length} model calls`,
      );
    } finally {
      await fake?.close();
      await location.cleanup();
    }
  }, 300_000);
});
