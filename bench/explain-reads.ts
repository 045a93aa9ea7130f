/**
 * Where a read's time goes, statement by statement: runs the bench's read scenarios in process
 * over a database the benchmark kept (`npm run bench -- --backend postgres --keep-db NAME`),
 * captures every statement of one request, and prints each statement's EXPLAIN (ANALYZE,
 * BUFFERS) plus its time as the gateway saw it.
 *
 *   DATABASE_URL=postgres://…/NAME npx tsx bench/explain-reads.ts [--size L] [--only context,search] [--i 3]
 *
 * `--repeat N --no-plans` under `node --cpu-prof --import tsx` profiles the gateway instead.
 * `--prepared` also runs every read statement 12 times on one connection, unnamed and as a named
 * prepared statement (interleaved), and prints the median of each and which plans PostgreSQL chose
 * (custom or generic: planning saved only with the latter). `--generic` adds a third run of each
 * under plan_cache_mode=force_generic_plan and prints that generic plan (EXPLAIN ANALYZE EXECUTE).
 * PostgreSQL only (PGlite has no separate server to explain on). Reads only, except the trace
 * rows the reads themselves write.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { toParam } from '../src/db/database.js';
import { openPostgres } from '../src/db/postgres-database.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import { StatementCapture, statementName } from './capture.js';
import { Dataset, SIZES, type SizeName } from './generate.js';
import { SCENARIOS } from './scenarios/index.js';
import type { ReadScenario, ScenarioContext } from './scenarios/types.js';
import { TextModel } from './text-model.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'L' },
    seed: { type: 'string', default: '42' },
    only: { type: 'string', default: 'context,search,typedContext' },
    i: { type: 'string', default: '3' },
    'no-plans': { type: 'boolean', default: false },
    prepared: { type: 'boolean', default: false },
    generic: { type: 'boolean', default: false },
    /** Then run the request this many more times (for a CPU profile: node --cpu-prof --import tsx). */
    repeat: { type: 'string', default: '0' },
  },
});
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL must name the kept benchmark database');
const cacheDir = process.env.MEMGATE_BENCH_CACHE_DIR ?? '.test-cache';
const size = SIZES[(values.size ?? 'L').toUpperCase() as SizeName];
const words = await loadWordVectors({ dataDir: cacheDir });
const seed = Number(values.seed);
const ds = new Dataset(size, seed, new TextModel(words.words, seed));

const raw = await openPostgres({ connectionString: url, statementTimeoutMs: 60_000 });
const capture = new StatementCapture(raw);
const config = parseConfig({
  MEMGATE_LOG_LEVEL: 'warn',
  MEMGATE_DATA_DIR: cacheDir,
  MEMGATE_EMBEDDER: 'offline',
  DATABASE_URL: url,
  MEMGATE_MAX_DEPTH: '20',
});
const app = await createApp(config, { db: capture.db });

async function gql(query: string, variables: unknown) {
  const res = await app.gateway.fetch('http://bench/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: res.status,
    ...((await res.json()) as { data?: unknown; errors?: { message: string }[] }),
  };
}

// Setups only send GraphQL (no gateway process here).
const ctx = {
  ds,
  quick: false,
  gql,
  log: (m: string) => process.stderr.write(`${m}\n`),
} as unknown as ScenarioContext;
const index = Number(values.i);
for (const name of (values.only ?? '').split(',')) {
  const scenario = SCENARIOS.find((s): s is ReadScenario => s.kind === 'read' && s.name === name);
  if (!scenario) throw new Error(`no read scenario ${name}`);
  if (scenario.setup) await scenario.setup(ctx);
  // Warm: caches, prepared plans, the embedder.
  for (let w = 0; w < 5; w++) await gql(scenario.document, scenario.variables(ds, index + 100 + w));
  const t0 = performance.now();
  capture.start();
  const answer = await gql(scenario.document, scenario.variables(ds, index));
  const summary = capture.stop();
  const e2e = performance.now() - t0;
  if (answer.errors?.length) console.log(`errors: ${answer.errors.map((e) => e.message).join('; ')}`);
  console.log(
    `\n## ${name}: ${e2e.toFixed(1)} ms end to end, ${summary.statements} statements, SQL in flight ${summary.wallMs.toFixed(1)} ms`,
  );
  for (const s of capture.statements()) {
    console.log(`\n### ${statementName(s.sql)} — ${(s.end - s.start).toFixed(2)} ms in the gateway`);
    // Reads only: a write would be run a second time.
    if (values['no-plans'] || /\b(INSERT|UPDATE|DELETE)\b/i.test(s.sql)) continue;
    const plan = await raw.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`, s.params);
    console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
  if (values.prepared) await comparePrepared(capture.statements());
}
const repeat = Number(values.repeat);
if (repeat > 0) {
  for (const name of (values.only ?? '').split(',')) {
    const scenario = SCENARIOS.find((s): s is ReadScenario => s.kind === 'read' && s.name === name)!;
    const t0 = performance.now();
    for (let r = 0; r < repeat; r++) await gql(scenario.document, scenario.variables(ds, r));
    console.log(
      `\n${name}: ${repeat} more requests, ${((performance.now() - t0) / repeat).toFixed(1)} ms each`,
    );
  }
}
await app.close();

/** Unnamed versus named (prepared) runs of each read statement, on one dedicated connection. */
async function comparePrepared(statements: readonly { sql: string; params: unknown[] }[]): Promise<void> {
  const client = new pg.Client({ connectionString: url, options: '-c jit=off' });
  await client.connect();
  const generic = values.generic
    ? new pg.Client({ connectionString: url, options: '-c jit=off -c plan_cache_mode=force_generic_plan' })
    : null;
  await generic?.connect();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const timed = async (config: string | pg.QueryConfig, params: unknown[], on = client) => {
    const t0 = performance.now();
    await (typeof config === 'string' ? on.query(config, params) : on.query(config));
    return performance.now() - t0;
  };
  try {
    for (const [i, s] of statements.entries()) {
      if (/\b(INSERT|UPDATE|DELETE)\b/i.test(s.sql)) continue;
      const params = s.params.map(toParam);
      const unnamed: number[] = [];
      const named: number[] = [];
      const forced: number[] = [];
      const name = `explain_${i}`;
      // Interleaved, so that neither side runs on warmer caches.
      for (let r = 0; r < 12; r++) {
        unnamed.push(await timed(s.sql, params));
        named.push(await timed({ name, text: s.sql, values: params }, params));
        if (generic) forced.push(await timed({ name, text: s.sql, values: params }, params, generic));
      }
      const { rows } = await client.query<{ generic_plans: number; custom_plans: number }>(
        'SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE name = $1',
        [name],
      );
      console.log(
        `${statementName(s.sql).padEnd(28)} unnamed ${median(unnamed).toFixed(2)} ms, prepared ${median(named).toFixed(2)} ms (generic ${rows[0]?.generic_plans}, custom ${rows[0]?.custom_plans})${generic ? `, forced generic ${median(forced).toFixed(2)} ms` : ''}`,
      );
      if (generic) {
        const literals = params.map((p) => {
          const text = (
            pg as unknown as { utils: { prepareValue(v: unknown): string | null } }
          ).utils.prepareValue(p);
          return text === null ? 'NULL' : generic.escapeLiteral(text);
        });
        await generic.query(`PREPARE generic_${i} AS ${s.sql}`);
        const plan = await generic.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS) EXECUTE generic_${i}(${literals.join(', ')})`,
        );
        console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
    }
  } finally {
    await client.end();
    await generic?.end();
  }
}
