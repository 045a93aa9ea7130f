/**
 * Where the time of extraction on the write path goes. Loads a dataset into a throwaway
 * database, starts the gateway process (with the model stand-in), then runs rounds of the plain,
 * +rules and +model recordObservations batches (as `npm run bench` does) with every statement
 * timed as the gateway saw it: prints, per scenario, the batch time, the SQL time and each
 * statement's median time by name, and the statements extraction adds. With --profile DIR it
 * writes a CPU profile of the gateway over the +rules batches and prints its heaviest
 * functions; it ends with EXPLAIN ANALYZE of the model queue's insert. --control sends the same
 * batches with extraction off everywhere (what the texts alone cost).
 *
 *   npx tsx bench/extraction-profile.ts [--size S|L] [--rounds 3] [--profile DIR]
 *   scripts/with-native-postgres.sh npx tsx bench/extraction-profile.ts --backend postgres …
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createEmbedder } from '../src/providers/create-embedder.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import type { CapturedStatement } from './capture.js';
import { statementName } from './capture.js';
import { type BenchBackend, createThrowaway } from './database.js';
import { Dataset, SIZES, type SizeName } from './generate.js';
import { startGateway } from './gateway-process.js';
import { closeSharedAgent, describeError, gql } from './http-load.js';
import { loadDataset } from './load.js';
import { startModelStandIn } from './model-stand-in.js';
import {
  MODEL_NAMESPACE,
  RULES_NAMESPACE,
  ingestObservationsWithModel,
  ingestObservationsWithRules,
} from './scenarios/extraction.js';
import { ingestObservations } from './scenarios/ingest.js';
import type { IngestScenario, ScenarioContext } from './scenarios/types.js';
import { median } from './stats.js';
import { TextModel } from './text-model.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'S' },
    backend: { type: 'string', default: 'pglite' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '500' },
    profile: { type: 'string' },
    /** A control: the same batches with extraction off (no pack, the plain gateway) everywhere. */
    control: { type: 'boolean', default: false },
  },
});
const size = values.size!.toUpperCase() as SizeName;
const backend = values.backend as BenchBackend;
const rounds = Number(values.rounds);
const batchSize = Number(values.batch);
const cacheDir = process.env.MEMGATE_BENCH_CACHE_DIR ?? '.test-cache';
const t0 = performance.now();
const log = (msg: string) =>
  process.stderr.write(`[profile ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);

const embedder = await createEmbedder('offline', { dataDir: cacheDir, log });
const words = await loadWordVectors({ dataDir: cacheDir });
const ds = new Dataset(SIZES[size], 42, new TextModel(words.words, 42));
const throwaway = await createThrowaway(
  backend,
  {
    databaseUrl: process.env.DATABASE_URL,
    cacheDir,
    embedding: { model: embedder.model, dimensions: embedder.dimensions },
  },
  `${size}:42:${embedder.model}`,
);
const model = await startModelStandIn();
try {
  const opened = await throwaway.openMigrated();
  await loadDataset(opened.db, ds, embedder, log);
  await opened.db.close();
  const gw = await startGateway(
    throwaway.location,
    cacheDir,
    {},
    { MEMGATE_BENCH_MODEL_URL: model.url, MEMGATE_BENCH_MODEL: 'bench-extraction' },
  );
  const ctx: ScenarioContext = {
    ds,
    backend,
    quick: false,
    gateway: gw,
    gql: (q, v) => gql(gw.url, q, v),
    log,
  };
  // The control sends every scenario's batches as they are, with no set-up and no model.
  const hooks = (scenario: IngestScenario): IngestScenario =>
    values.control
      ? { ...scenario, setup: undefined, beforeBatch: undefined, afterBatch: undefined }
      : scenario;
  const scenarios: IngestScenario[] = [
    ingestObservations,
    ingestObservationsWithRules,
    ingestObservationsWithModel,
  ].map(hooks);
  const send = async (scenario: IngestScenario, b: number, items: number) => {
    await scenario.beforeBatch?.(ctx);
    const t = performance.now();
    const answer = await ctx.gql(scenario.document, scenario.batch(ds, b, items).variables);
    const ms = performance.now() - t;
    if (answer.errors?.length) throw new Error(describeError(answer));
    await scenario.afterBatch?.(ctx, b);
    return ms;
  };
  for (const scenario of scenarios) {
    await scenario.setup?.(ctx);
    await send(scenario, 999, 50);
  }
  let lastRulesBatch: CapturedStatement[] = [];
  type Timings = { batchMs: number[]; sqlMs: number[]; byName: Map<string, number[]> };
  const byScenario = new Map<string, Timings>();
  if (values.profile) mkdirSync(values.profile, { recursive: true });
  for (let round = 0; round < rounds; round++) {
    for (const scenario of scenarios) {
      const entry: Timings = byScenario.get(scenario.name) ?? { batchMs: [], sqlMs: [], byName: new Map() };
      byScenario.set(scenario.name, entry);
      const profiled = values.profile && scenario.name === ingestObservationsWithRules.name;
      await scenario.beforeBatch?.(ctx);
      if (profiled) await gw.profileStart();
      await gw.captureStart();
      const t = performance.now();
      const answer = await ctx.gql(scenario.document, scenario.batch(ds, round, batchSize).variables);
      entry.batchMs.push(performance.now() - t);
      const summary = await gw.captureStop();
      if (profiled) await gw.profileStop(join(values.profile!, `rules-${round}.cpuprofile`));
      if (answer.errors?.length) throw new Error(describeError(answer));
      await scenario.afterBatch?.(ctx, round);
      entry.sqlMs.push(summary.sumMs);
      const statements = (await gw.capturedStatements()) as CapturedStatement[];
      if (scenario.name === ingestObservationsWithRules.name) lastRulesBatch = statements;
      const perName = new Map<string, number>();
      for (const s of statements) {
        const name = statementName(s.sql);
        perName.set(name, (perName.get(name) ?? 0) + (s.end - s.start));
      }
      for (const [name, ms] of perName) entry.byName.set(name, [...(entry.byName.get(name) ?? []), ms]);
    }
  }
  const plainNames = new Set(byScenario.get(ingestObservations.name)!.byName.keys());
  for (const [name, entry] of byScenario) {
    console.log(
      `\n${name}: batch ${median(entry.batchMs).toFixed(0)} ms (median of ${entry.batchMs.length}), statements' time ${median(entry.sqlMs).toFixed(0)} ms`,
    );
    const rows = [...entry.byName.entries()]
      .map(([statement, list]) => ({ statement, ms: median(list) }))
      .sort((a, b) => b.ms - a.ms);
    for (const { statement, ms } of rows)
      console.log(
        `  ${ms.toFixed(1).padStart(8)} ms  ${statement}${plainNames.has(statement) ? '' : '  (added)'}`,
      );
  }
  if (values.profile) {
    console.log('\ngateway CPU over the +rules batches (inclusive ms per round, heaviest functions):');
    for (const { fn, ms } of heaviest(values.profile, rounds).slice(0, 40))
      console.log(`  ${ms.toFixed(0).padStart(7)} ms  ${fn}`);
  }
  // Extraction names entities that later texts mention again: entity linking finds them.
  const rows = await gw.query<{ namespace: string; entities: number; mentions: number }>(
    `SELECT n.namespace,
       (SELECT count(*)::int FROM entities e WHERE e.namespace = n.namespace) AS entities,
       (SELECT count(*)::int FROM mentions m WHERE m.namespace = n.namespace) AS mentions
     FROM unnest($1::text[]) AS n(namespace)`,
    [['bench-ingest', RULES_NAMESPACE, MODEL_NAMESPACE]],
  );
  console.log('\nentities and mentions (entity links) per namespace at the end:');
  for (const r of rows) console.log(`  ${r.namespace}: ${r.entities} entities, ${r.mentions} mentions`);
  // The gazetteer look-up of the last +rules batch (a read: replayed as it ran, planned
  // generically as the write transaction plans it).
  const lookup = lastRulesBatch.find((st) => statementName(st.sql) === 'findNamedEntities');
  if (lookup) {
    console.log("\nEXPLAIN ANALYZE of the last +rules batch's findNamedEntities (generic plan):");
    for (const line of await explainGeneric(lookup.sql, lookup.params)) console.log(`  ${line}`);
    // The same names looked up in the dataset's namespace: what it costs where there are many entities.
    const inDataset = lookup.params.map((v) => (v === RULES_NAMESPACE ? ds.namespace : v));
    const entities = await gw.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM entities WHERE namespace = $1',
      [ds.namespace],
    );
    console.log(`\nThe same look-up in the dataset's namespace (${entities[0]?.n ?? 0} entities):`);
    for (const line of await explainGeneric(lookup.sql, inDataset)) console.log(`  ${line}`);
  }
  // The model queue's insert, on fresh job ids (rows of a finished batch's jobs, renamed).
  const payload = JSON.stringify(
    Array.from({ length: batchSize }, (_, i) => ({
      job_id: `explain:${i}`,
      source_kind: 'observation',
      source_id: `explain-${i}`,
      source_ord: 0,
      batch_key: 'explain',
      occurred_at: new Date().toISOString(),
    })),
  );
  const plan = await gw.query<Record<string, string>>(
    `EXPLAIN (ANALYZE, BUFFERS)
     INSERT INTO extraction_jobs (namespace, job_id, source_kind, source_id, source_ord, batch_key, occurred_at)
     SELECT $1, j.job_id, j.source_kind, j.source_id, j.source_ord, j.batch_key, j.occurred_at
     FROM jsonb_to_recordset($2::jsonb)
       AS j(job_id text, source_kind text, source_id text, source_ord int, batch_key text, occurred_at timestamptz)
     WHERE NOT EXISTS (SELECT 1 FROM namespace_settings s
                       WHERE s.namespace = $1 AND (s.extraction->>'model')::boolean IS FALSE)
     ON CONFLICT (namespace, job_id) DO NOTHING`,
    ['bench-explain', payload],
  );
  console.log(`\nEXPLAIN ANALYZE of the queue insert (${batchSize} jobs):`);
  for (const row of plan) console.log(`  ${Object.values(row)[0]}`);
  await gw.query(`DELETE FROM extraction_jobs WHERE namespace = 'bench-explain'`);
  await gw.stop();
  closeSharedAgent();

  /**
   * EXPLAIN (ANALYZE, BUFFERS) of a statement as the write transaction runs it: prepared, with
   * plan_cache_mode = force_generic_plan (EXPLAIN of the statement itself would plan it for
   * its parameters' values).
   */
  async function explainGeneric(text: string, params: unknown[]): Promise<string[]> {
    const steps = ['SET plan_cache_mode = force_generic_plan', `PREPARE bench_explain AS ${text}`];
    // EXPLAIN takes no bind parameters: the values are written out as literals.
    const execute = `EXPLAIN (ANALYZE, BUFFERS) EXECUTE bench_explain(${params.map(literal).join(', ')})`;
    const undo = ['DEALLOCATE bench_explain', 'RESET plan_cache_mode'];
    if (throwaway.location.backend === 'pglite') {
      for (const step of steps) await gw.query(step);
      try {
        return (await gw.query<Record<string, string>>(execute)).map((r) => Object.values(r)[0]!);
      } finally {
        for (const step of undo) await gw.query(step);
      }
    }
    // One connection of its own: a session's prepared statement and setting.
    const client = new pg.Client({ connectionString: throwaway.location.url });
    await client.connect();
    try {
      for (const step of steps) await client.query(step);
      const { rows } = await client.query<Record<string, string>>(execute);
      return rows.map((r) => Object.values(r)[0]!);
    } finally {
      await client.end();
    }
  }
} finally {
  await model.close();
  await throwaway.destroy();
}

/** A parameter value as an SQL literal (strings, numbers, booleans, dates, arrays of them, JSON). */
function literal(value: unknown): string {
  const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return quote(value);
  if (value instanceof Date) return quote(value.toISOString());
  if (Array.isArray(value)) {
    const items = value.map((v) =>
      v === null ? 'NULL' : `"${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`,
    );
    return quote(`{${items.join(',')}}`);
  }
  return quote(JSON.stringify(value));
}

/** Inclusive time per function (name and place) over the profiles, per round (ms). */
function heaviest(dir: string, count: number): { fn: string; ms: number }[] {
  const total = new Map<string, number>();
  for (let r = 0; r < count; r++) {
    const profile = JSON.parse(readFileSync(join(dir, `rules-${r}.cpuprofile`), 'utf8')) as {
      nodes: {
        id: number;
        callFrame: { functionName: string; url: string; lineNumber: number };
        children?: number[];
      }[];
      samples: number[];
      timeDeltas: number[];
    };
    const parent = new Map<number, number>();
    const label = new Map<number, string>();
    for (const node of profile.nodes) {
      for (const child of node.children ?? []) parent.set(child, node.id);
      const file = node.callFrame.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/');
      label.set(
        node.id,
        `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}`,
      );
    }
    profile.samples.forEach((id, i) => {
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const fn = label.get(at)!;
        if (seen.has(fn)) continue;
        seen.add(fn);
        total.set(fn, (total.get(fn) ?? 0) + ms);
      }
    });
  }
  return [...total.entries()]
    .map(([fn, ms]) => ({ fn, ms: ms / count }))
    .filter(({ fn }) => !fn.startsWith('(root)') && !fn.startsWith('(program)') && !fn.startsWith('(idle)'))
    .sort((a, b) => b.ms - a.ms);
}
