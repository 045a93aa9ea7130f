/** `npm run bench` and `memgate bench`: options, the run, the report. */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchBackend } from './database.js';
import type { SizeName } from './generate.js';
import { renderMarkdown, writeResults } from './report.js';
import { renderSummary } from './summary.js';
import type { BenchOptions, BenchResult } from './runner.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export const BENCH_USAGE = `Usage: npm run bench -- [options]        (or: npx memgate bench [options])

  --size S|L              dataset: S = 10k chunks, 10k entities, 50k facts (default);
                          L = 100k chunks, 100k entities, 500k facts
  --backend pglite|postgres
                          pglite (default): a throwaway PGlite directory under the temp dir;
                          postgres: a new database on the server of DATABASE_URL, dropped after
                          (here: scripts/with-native-postgres.sh npm run bench -- --backend postgres)
  --quick                 CI: a 2k-chunk subset, one short run per figure, batches of 100
  --runs N                repeated runs per figure, medians reported (default 3; 1 with --quick)
  --concurrency 1,8,32    concurrent HTTP clients per read figure
  --batch N               items per ingest mutation (default 500; 100 with --quick)
  --batches N             timed batches per ingest figure (default 3; 6 rounds for scenarios
                          compared with recordObservations; 1 with --quick)
  --only a,b              only these scenarios (entity, search, context, typedContext, explore,
                          neighbors, recordObservations, recordObservations+rules,
                          recordObservations+model, recordObservations+assertions,
                          retainDocuments, assertFacts, bulkImport)
  --seed N                generator seed (default 42)
  --out DIR               results directory (default bench/results)
  --label NAME            name the results NAME-<size>-<backend>.json and .md (a partial run,
                          written beside the full-suite files instead of over them)
  --keep-db NAME          postgres: keep the loaded database NAME after the run and reuse it
                          on the next run with the same size and seed (skips the load; for
                          profiling, not for published figures)
  --render FILE.json      only re-render the Markdown of a results file
  --summary [FILE.json…]  only print one table across results files (default: bench/results/[SL]-*.json)

Prints a Markdown table and writes <size>-<backend>.json and .md under the results directory.
recordObservations+rules and recordObservations+model run only when named in --only; they run
in alternating rounds with recordObservations (when it is named too) and report their rate ÷
its rate; +model starts a local stand-in for an OpenAI-compatible model (nothing leaves the
machine). E.g. --only recordObservations,recordObservations+rules,recordObservations+model
--label extraction.
No thresholds are asserted: the figures are for reading, not for failing.
`;

export function parseBenchArgs(
  argv: string[],
  env: Record<string, string | undefined>,
): BenchOptions & { out: string } {
  const options: BenchOptions & { out: string } = {
    size: 'S',
    backend: 'pglite',
    quick: false,
    seed: 42,
    runs: 3,
    concurrency: [1, 8, 32],
    batchSize: 500,
    only: [],
    cacheDir: env.MEMGATE_BENCH_CACHE_DIR ?? join(root, '.test-cache'),
    databaseUrl: env.DATABASE_URL,
    argv,
    out: join(root, 'bench', 'results'),
  };
  let runsGiven = false;
  let batchGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--size': {
        const v = value().toUpperCase();
        if (v !== 'S' && v !== 'L') throw new Error(`--size must be S or L, got ${v}`);
        options.size = v as SizeName;
        break;
      }
      case '--backend': {
        const v = value();
        if (v !== 'pglite' && v !== 'postgres')
          throw new Error(`--backend must be pglite or postgres, got ${v}`);
        options.backend = v as BenchBackend;
        break;
      }
      case '--quick':
        options.quick = true;
        break;
      case '--runs':
        options.runs = positiveInt(flag, value());
        runsGiven = true;
        break;
      case '--concurrency':
        options.concurrency = value()
          .split(',')
          .map((v) => positiveInt(flag, v));
        break;
      case '--batch':
        options.batchSize = positiveInt(flag, value());
        batchGiven = true;
        break;
      case '--batches':
        options.batches = positiveInt(flag, value());
        break;
      case '--label': {
        const v = value();
        if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(v))
          throw new Error(`--label must be a plain file name, got ${v}`);
        options.label = v;
        break;
      }
      case '--only':
        options.only = value()
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
        break;
      case '--seed':
        options.seed = positiveInt(flag, value());
        break;
      case '--out':
        options.out = value();
        break;
      case '--keep-db':
        options.keepDatabase = value();
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  if (options.quick) {
    options.size = 'S';
    if (!runsGiven) options.runs = 1;
    if (!batchGiven) options.batchSize = 100;
  }
  return options;
}

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a positive integer, got ${v}`);
  return n;
}

/** Runs the benchmark; resolves to the process exit code. */
export async function benchMain(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  if (argv[0] === '--summary') {
    // One table across the results files given (default: every full run in bench/results).
    const dir = join(root, 'bench', 'results');
    const files =
      argv.length > 1
        ? argv.slice(1)
        : readdirSync(dir)
            .filter((f) => /^[SL]-(pglite|postgres)\.json$/.test(f))
            .map((f) => join(dir, f));
    const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as BenchResult);
    process.stdout.write(renderSummary(results));
    return 0;
  }
  if (argv[0] === '--render') {
    // Re-renders the Markdown of a results file (after a change to the report's layout).
    const file = argv[1];
    if (!file) throw new Error('--render needs a results .json file');
    const result = JSON.parse(readFileSync(file, 'utf8')) as BenchResult;
    const md = renderMarkdown(result);
    writeFileSync(file.replace(/\.json$/, '.md'), md);
    process.stdout.write(md);
    return 0;
  }
  let options: ReturnType<typeof parseBenchArgs>;
  try {
    options = parseBenchArgs(argv, process.env);
  } catch (error) {
    process.stderr.write(
      `bench: ${error instanceof Error ? error.message : String(error)}\n\n${BENCH_USAGE}`,
    );
    return 2;
  }
  const { runBench } = await import('./runner.js');
  const t0 = performance.now();
  const log = (msg: string) =>
    process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
  const result = await runBench(options, log);
  process.stdout.write(`\n${renderMarkdown(result)}`);
  const files = writeResults(result, options.out);
  log(`wrote ${files.json} and ${files.md}`);
  return 0;
}
