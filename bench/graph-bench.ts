/**
 * Graph-read benchmark: p50/p95 of a 3-level exploration query and of a 2-hop neighbourhood
 * (on random nodes and on the largest hub) over a synthetic power-law graph, with the SQL
 * statements each request costs. Bulk-loaded with generate_series, never through GraphQL.
 *
 *   npx tsx bench/graph-bench.ts [--entities 100000] [--facts 500000] [--iterations 200]
 *   scripts/with-native-postgres.sh npx tsx bench/graph-bench.ts      (native PostgreSQL)
 *
 * The generator and the runner are exported for `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import type { Database, Queryable } from '../src/db/database.js';
import { openPglite } from '../src/db/pglite-database.js';
import { openPostgres } from '../src/db/postgres-database.js';
import { createLogger } from '../src/logger.js';
import { createHashingEmbedder } from '../src/providers/hashing-embedder.js';

export interface GraphSpec {
  namespace: string;
  entities: number;
  facts: number;
  /** Observations the facts cite (each fact cites one). */
  observations: number;
  /**
   * Endpoint skew: an endpoint is entity floor(N · u^alpha), u uniform in [0, 1): degrees follow
   * a power law and entity 0 is the hub (alpha 2.5 gives it ~10k edges at 100k/500k).
   */
  alpha: number;
  /** Share of facts closed (superseded) at a random later time. */
  closedShare: number;
  /** Rows per INSERT statement. */
  batch: number;
  seed: number;
}

export const DEFAULT_GRAPH: GraphSpec = {
  namespace: 'graph-bench',
  entities: 100_000,
  facts: 500_000,
  observations: 50_000,
  alpha: 2.5,
  closedShare: 0.1,
  batch: 50_000,
  seed: 0.42,
};

const KINDS = ['person', 'project', 'service', 'document', 'team'];
const PREDICATES = [
  'knows',
  'works_on',
  'depends_on',
  'mentions',
  'owns',
  'part_of',
  'links_to',
  'reports_to',
];

/** Entity keys are `e<i>`; the hub (highest degree) is `e0`. */
export const entityKey = (i: number) => `e${i}`;

/**
 * Loads the graph with INSERT … SELECT generate_series in batches, deterministic for a seed
 * (setseed per batch), then ANALYZE. Returns the time taken and the hub's degree.
 */
export async function generateGraph(
  db: Queryable & Pick<Database, 'exec'>,
  spec: GraphSpec = DEFAULT_GRAPH,
  log: (line: string) => void = () => {},
): Promise<{ ms: number; hubDegree: number; facts: number }> {
  const started = performance.now();
  const ns = spec.namespace;
  for (let from = 0; from < spec.entities; from += spec.batch) {
    const to = Math.min(spec.entities, from + spec.batch) - 1;
    await db.query(
      `/* benchGraphEntities */
       INSERT INTO entities (namespace, key, kind, title, attributes, last_seen)
       SELECT $1, 'e' || i, ($4::text[])[1 + i % cardinality($4::text[])], 'Entity ' || i,
              jsonb_build_object('rank', i), timestamptz '2024-01-01' + i * interval '1 second'
       FROM generate_series($2::int, $3::int) AS i
       ON CONFLICT DO NOTHING`,
      [ns, from, to, KINDS],
    );
  }
  log(`entities: ${spec.entities}`);
  for (let from = 0; from < spec.observations; from += spec.batch) {
    const to = Math.min(spec.observations, from + spec.batch) - 1;
    await db.query(
      `/* benchGraphObservations */
       INSERT INTO observations (namespace, observation_id, source_system, source_stream, source_external_id, kind,
                                 occurred_at, content, status)
       SELECT $1, 'obs-' || substr(md5('o' || j), 1, 24), 'bench', 'graph', 'evt-' || j, 'event',
              timestamptz '2020-01-01' + j * interval '1 hour', 'event ' || j, 'PROCESSED'
       FROM generate_series($2::int, $3::int) AS j
       ON CONFLICT DO NOTHING`,
      [ns, from, to],
    );
  }
  log(`observations: ${spec.observations}`);
  for (let from = 0; from < spec.facts; from += spec.batch) {
    const to = Math.min(spec.facts, from + spec.batch) - 1;
    // A seed per batch keeps every batch reproducible whatever ran before it.
    await db.query(`SELECT setseed($1::float8)`, [((spec.seed * 1_000_003 + from) % 1_000_000) / 1_000_000]);
    await db.query(
      `/* benchGraphFacts */
       WITH draws AS (
         SELECT i,
                floor($4::int * power(random(), $5::float8))::int AS s,
                floor($4::int * power(random(), $5::float8))::int AS o,
                1 + floor(random() * cardinality($6::text[]))::int AS p,
                timestamptz '2020-01-01' + random() * interval '1800 days' AS vf,
                random() < $7::float8 AS closed,
                random() AS r
         FROM generate_series($2::int, $3::int) AS i
       )
       INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, valid_to, evidence, confidence,
                          status, observation_ids)
       SELECT $1, 'fact-' || substr(md5('f' || i), 1, 24), 'e' || s, ($6::text[])[p], 'e' || CASE WHEN o = s THEN (o + 1) % $4::int ELSE o END,
              vf, CASE WHEN closed THEN vf + r * interval '365 days' END, 'ASSERTED', round((0.5 + r / 2)::numeric, 2),
              CASE WHEN closed THEN 'SUPERSEDED' ELSE 'ACTIVE' END,
              ARRAY['obs-' || substr(md5('o' || (i % $8::int)), 1, 24)]
       FROM draws
       ON CONFLICT DO NOTHING`,
      [ns, from, to, spec.entities, spec.alpha, PREDICATES, spec.closedShare, spec.observations],
    );
    log(`facts: ${to + 1}/${spec.facts}`);
  }
  // VACUUM sets hint bits and the visibility map once, instead of the first reads dirtying every
  // page (PGlite then writes them back); it must be its own call on PGlite.
  for (const table of ['entities', 'facts', 'observations']) await db.exec(`VACUUM ANALYZE ${table}`);
  const { rows } = await db.query<{ n: number; total: number }>(
    `SELECT (SELECT count(*)::int FROM facts WHERE namespace = $1 AND (subject = 'e0' OR object = 'e0')) AS n,
            (SELECT count(*)::int FROM facts WHERE namespace = $1) AS total`,
    [ns],
  );
  return { ms: performance.now() - started, hubDegree: rows[0]?.n ?? 0, facts: rows[0]?.total ?? 0 };
}

/** entity → facts → object → facts → object → facts → object, with the first level's evidence. */
export const EXPLORE_QUERY = /* GraphQL */ `
  query Explore($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) {
      key title
      facts(first: 10) { edges { node {
        predicate validFrom
        observations { observationId kind }
        object { key title
          facts(first: 10) { edges { node {
            predicate
            object { key title
              facts(first: 5) { edges { node { predicate object { key title } } } }
            }
          } } }
        }
      } } }
    }
  }
`;

export const NEIGHBORHOOD_QUERY = /* GraphQL */ `
  query Neighborhood($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) {
      key
      neighbors(hops: 2, limit: 40) { distance entity { key title } via { predicate validFrom } }
    }
  }
`;

export interface LatencyFigures {
  name: string;
  requests: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** The fastest request: closest to the cost of the work itself when the cores are shared. */
  minMs: number;
  /**
   * CPU time of this process per request (user + system). On PGlite the database runs in
   * process, so this is the request's whole cost and, unlike wall time, does not grow when
   * other processes compete for the cores.
   */
  cpuP50Ms: number;
  cpuP95Ms: number;
  /** Time spent in SQL statements per request (the sum the gateway reports in extensions.sql). */
  sqlP50Ms: number;
  /** SQL statements per request (min–max over the run). */
  statements: [number, number];
}

export type Execute = (
  query: string,
  variables: Record<string, unknown>,
) => Promise<{ errors?: unknown[]; extensions?: { sql?: { statements: number; ms: number } } }>;

/** Runs `query` once per key (after `warmup` untimed runs) and summarises the latencies. */
export async function measure(
  name: string,
  execute: Execute,
  query: string,
  namespace: string,
  keys: string[],
  warmup = 10,
): Promise<LatencyFigures> {
  for (const key of keys.slice(0, warmup)) await execute(query, { ns: namespace, key });
  const times: number[] = [];
  const cpu: number[] = [];
  const sql: number[] = [];
  let minStatements = Number.POSITIVE_INFINITY;
  let maxStatements = 0;
  for (const key of keys) {
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    const res = await execute(query, { ns: namespace, key });
    const used = process.cpuUsage(cpuStart);
    times.push(performance.now() - started);
    cpu.push((used.user + used.system) / 1000);
    if (res.errors?.length) throw new Error(`${name} failed: ${JSON.stringify(res.errors).slice(0, 400)}`);
    const statements = res.extensions?.sql?.statements ?? Number.NaN;
    sql.push(res.extensions?.sql?.ms ?? Number.NaN);
    minStatements = Math.min(minStatements, statements);
    maxStatements = Math.max(maxStatements, statements);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  sql.sort((a, b) => a - b);
  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
  return {
    name,
    requests: times.length,
    p50Ms: round(pct(times, 50)),
    p95Ms: round(pct(times, 95)),
    maxMs: round(times[times.length - 1]!),
    minMs: round(times[0]!),
    cpuP50Ms: round(pct(cpu, 50)),
    cpuP95Ms: round(pct(cpu, 95)),
    sqlP50Ms: round(pct(sql, 50)),
    statements: [minStatements, maxStatements],
  };
}

/** Deterministic sample of entity indexes, uniform over the graph (most are low-degree). */
export function sampleKeys(entities: number, count: number, seed = 7): string[] {
  let x = seed >>> 0 || 1;
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    keys.push(entityKey((x >>> 0) % entities));
  }
  return keys;
}

/** The top-degree nodes (hubs) of the power law: e0, e1, … */
export function hubKeys(count: number): string[] {
  return Array.from({ length: count }, (_, i) => entityKey(i));
}

export interface GraphBenchResult {
  backend: string;
  spec: GraphSpec;
  load: { ms: number; hubDegree: number; facts: number };
  figures: LatencyFigures[];
}

/** Generates the graph into `db`, builds an in-process gateway over it and measures. */
export async function runGraphBench(
  db: Database,
  options: { spec?: GraphSpec; iterations?: number; log?: (line: string) => void } = {},
): Promise<GraphBenchResult> {
  const spec = options.spec ?? DEFAULT_GRAPH;
  const iterations = options.iterations ?? 200;
  const log = options.log ?? (() => {});
  const config = parseConfig({
    MEMGATE_TRACE_SQL: '1',
    MEMGATE_LOG_LEVEL: 'silent',
    MEMGATE_EMBEDDER: 'hashing:64',
    MEMGATE_DATA_DIR: join(tmpdir(), 'memgate-graph-bench'),
    // Three levels of connections (facts → edges → node → object) nest 14 fields deep, past the
    // default depth limit of 12: the benchmark measures that shape as the issue states it.
    MEMGATE_MAX_DEPTH: '16',
  });
  const app = await createApp(config, {
    db,
    embedder: createHashingEmbedder(64),
    logger: createLogger('silent'),
  });
  const load = await generateGraph(db, spec, log);
  log(`loaded in ${(load.ms / 1000).toFixed(1)} s; hub e0 has ${load.hubDegree} edges`);
  const execute: Execute = async (query, variables) => {
    const res = await app.gateway.fetch('http://bench.local/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as Awaited<ReturnType<Execute>>;
  };
  const random = sampleKeys(spec.entities, iterations);
  const hubs = hubKeys(Math.min(20, iterations));
  const figures = [
    await measure('explore 3 levels, random node', execute, EXPLORE_QUERY, spec.namespace, random),
    await measure(
      'explore 3 levels, top-20 hubs',
      execute,
      EXPLORE_QUERY,
      spec.namespace,
      repeat(hubs, iterations),
    ),
    await measure('neighbors 2 hops, random node', execute, NEIGHBORHOOD_QUERY, spec.namespace, random),
    await measure(
      'neighbors 2 hops, top-20 hubs',
      execute,
      NEIGHBORHOOD_QUERY,
      spec.namespace,
      repeat(hubs, iterations),
    ),
  ];
  return { backend: db.backend, spec, load, figures };
}

function repeat<T>(items: T[], count: number): T[] {
  return Array.from({ length: count }, (_, i) => items[i % items.length]!);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

export function formatFigures(result: GraphBenchResult): string {
  const header = ['n', 'min ms', 'p50 ms', 'p95 ms', 'max ms', 'cpu p50', 'cpu p95', 'sql p50'];
  const row = (name: string, cells: string[], sql: string) =>
    `${name.padEnd(34)} ${cells.map((c, i) => c.padStart(i === 0 ? 5 : 8)).join(' ')}  ${sql}`;
  const lines = [
    `graph bench on ${result.backend}: ${result.spec.entities} entities, ${result.load.facts} facts ` +
      `(power law, alpha ${result.spec.alpha}; hub e0 has ${result.load.hubDegree} edges), loaded in ` +
      `${(result.load.ms / 1000).toFixed(1)} s`,
    row('query', header, 'SQL/request'),
  ];
  for (const f of result.figures) {
    const [lo, hi] = f.statements;
    const ms = [f.minMs, f.p50Ms, f.p95Ms, f.maxMs, f.cpuP50Ms, f.cpuP95Ms, f.sqlP50Ms].map((v) =>
      v.toFixed(2),
    );
    lines.push(row(f.name, [String(f.requests), ...ms], lo === hi ? `${lo}` : `${lo}–${hi}`));
  }
  return lines.join('\n');
}

// ------------------------------------------------------------------ command line

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const spec: GraphSpec = {
    ...DEFAULT_GRAPH,
    entities: args.entities ?? DEFAULT_GRAPH.entities,
    facts: args.facts ?? DEFAULT_GRAPH.facts,
    observations: Math.max(1, Math.round((args.facts ?? DEFAULT_GRAPH.facts) / 10)),
  };
  const log = (line: string) => process.stderr.write(`[graph-bench] ${line}\n`);
  const { db, dispose } = await openThrowaway(process.env.DATABASE_URL);
  try {
    const result = await runGraphBench(db, { spec, iterations: args.iterations ?? 200, log });
    process.stdout.write(`${formatFigures(result)}\n`);
    const [load1] = loadavg();
    process.stdout.write(`load average at the end: ${load1?.toFixed(2)} on ${cpus().length} cores\n`);
    if (args.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await dispose();
  }
}

/** PGlite in a temporary directory, or a new database on DATABASE_URL's server; removed after. */
async function openThrowaway(
  url: string | undefined,
): Promise<{ db: Database; dispose: () => Promise<void> }> {
  if (!url) {
    const dir = mkdtempSync(join(tmpdir(), 'memgate-graph-bench-'));
    const db = await openPglite({ dataDir: join(dir, 'pgdata') });
    return {
      db,
      dispose: async () => {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `memgate_graph_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  const db = await openPostgres({ connectionString: u.toString(), statementTimeoutMs: 600_000 });
  return {
    db,
    dispose: async () => {
      await db.close();
      const dropper = new pg.Client({ connectionString: url });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

function parseArgs(argv: string[]): {
  entities?: number;
  facts?: number;
  iterations?: number;
  json: boolean;
} {
  const out: { entities?: number; facts?: number; iterations?: number; json: boolean } = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = Number(argv[i + 1]);
    if (flag === '--json') out.json = true;
    else if (flag === '--entities' || flag === '--facts' || flag === '--iterations') {
      if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} needs a positive integer`);
      out[flag.slice(2) as 'entities' | 'facts' | 'iterations'] = value;
      i++;
    } else throw new Error(`unknown argument ${flag}`);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
