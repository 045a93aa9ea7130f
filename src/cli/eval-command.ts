import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { registerCommand } from '../cli-registry.js';
import { UsageError, parseArgs, positiveInt } from './args.js';
import { LANGUAGES_USAGE, runLanguagesCommand } from './eval-languages-command.js';
import { UPDATES_USAGE, runUpdatesCommand } from './eval-updates-command.js';
import { EXTRACTION_USAGE, runExtractionCommand } from './eval-extraction-command.js';

const USAGE = `Usage: memgate eval locomo FILE.json... [options]
  (or: npm run eval:locomo -- FILE.json... [options])

Imports each LoCoMo conversation into its own namespace, asks every question with evidence
through the search code path, and prints recall@5/10/20 and MRR per mode and category.

Options:
  --modes LEXICAL,VECTOR,HYBRID   modes to run (default: all three)
  --weights vector=0.35,lexical=1 HYBRID channel weights (default: fitted to the embedder)
  --rrf-k 60                      RRF constant
  --sweep 0.1,0.25,0.5,1          extra HYBRID runs, one per vector weight
  --limit N                       only the first N questions of each file
  --context HYBRID,AUTO            extra runs through context(strategy) (AUTO = intent routing)
  --context-window 1,1             previous,next turns each turn is indexed with (0,0 = off)
  --pack-budget 2000               token budget of the --context runs
  --equal-timestamps              a session's turns share one timestamp (default: one second apart)
  --first-half N                  the first N files form half one of the split (default: half)
  --out FILE.json                 where the JSON report goes (default eval/results/locomo-<time>.json)
  --data-dir DIR                  offline embedder cache (default MEMGATE_DATA_DIR or ./.memgate)
  DATABASE_URL                    set it to run on native PostgreSQL (an empty database)`;

const MODES = ['LEXICAL', 'VECTOR', 'HYBRID'] as const;

/** The `eval locomo` command; `scripts/eval-locomo.ts` runs the same. Returns the exit code. */
export async function runLocomoCommand(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { runLocomoEval, formatReport } = await import('../eval/locomo.js');
  const report = await runLocomoEval({
    ...parsed.options,
    log: (message) => process.stderr.write(`${message}\n`),
  });
  process.stdout.write(formatReport(report));
  mkdirSync(dirname(parsed.out), { recursive: true });
  writeFileSync(parsed.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`report: ${parsed.out}\n`);
  return 0;
}

function parseOptions(args: string[]) {
  const { positional, options } = parseArgs(args, [
    'modes',
    'weights',
    'rrf-k',
    'sweep',
    'limit',
    'out',
    'data-dir',
    'context',
    'pack-budget',
    'context-window',
    'first-half',
  ]);
  if (options.has('help')) return 'help' as const;
  if (positional.length === 0) throw new UsageError('name at least one LoCoMo FILE.json');
  const modesOption = options.get('modes');
  const modes = (typeof modesOption === 'string' ? modesOption.split(',') : [...MODES]).map((m) => {
    const mode = m.trim().toUpperCase();
    if (!(MODES as readonly string[]).includes(mode)) throw new UsageError(`unknown mode "${m}"`);
    return mode as (typeof MODES)[number];
  });
  const weightsOption = options.get('weights');
  let weights: Record<string, number> | null = null;
  if (typeof weightsOption === 'string') {
    weights = {};
    for (const pair of weightsOption.split(',')) {
      const [name, value] = pair.split('=');
      const w = Number(value);
      if (
        !name ||
        !['vector', 'lexical', 'exact', 'graph'].includes(name.trim()) ||
        !Number.isFinite(w) ||
        w < 0
      ) {
        throw new UsageError(
          `--weights: bad pair "${pair}" (channel=weight, channels vector lexical exact graph)`,
        );
      }
      weights[name.trim()] = w;
    }
  }
  const sweepOption = options.get('sweep');
  const sweep =
    typeof sweepOption === 'string'
      ? sweepOption.split(',').map((v) => {
          const w = Number(v);
          if (!Number.isFinite(w) || w < 0) throw new UsageError(`--sweep: "${v}" is not a weight`);
          return w;
        })
      : [];
  const limit = options.has('limit') ? positiveInt(options.get('limit'), 'limit', 0) : undefined;
  const rrfK = options.has('rrf-k') ? positiveInt(options.get('rrf-k'), 'rrf-k', 60) : null;
  const dataDir = options.get('data-dir');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const out = options.get('out');
  return {
    out: typeof out === 'string' ? out : join('eval', 'results', `locomo-${stamp}.json`),
    options: {
      files: positional,
      modes,
      weights,
      rrfK,
      sweepVectorWeights: sweep,
      limit,
      contextWindow: contextWindowOption(options.get('context-window')),
      equalTimestamps: options.has('equal-timestamps'),
      packBudget: options.has('pack-budget')
        ? positiveInt(options.get('pack-budget'), 'pack-budget', 2000)
        : undefined,
      firstHalf: options.has('first-half')
        ? positiveInt(options.get('first-half'), 'first-half', 0)
        : undefined,
      contextStrategies: (() => {
        const c = options.get('context');
        if (typeof c !== 'string') return [];
        return c.split(',').map((s) => {
          const v = s.trim().toUpperCase();
          if (v !== 'HYBRID' && v !== 'AUTO') throw new UsageError(`--context: unknown strategy "${s}"`);
          return v as 'HYBRID' | 'AUTO';
        });
      })(),
      dataDir: typeof dataDir === 'string' ? dataDir : (process.env.MEMGATE_DATA_DIR ?? './.memgate'),
      databaseUrl: process.env.DATABASE_URL || undefined,
    },
  };
}

registerCommand('eval', {
  summary:
    'retrieval quality: `eval locomo FILE.json...` (recall@k and MRR per mode and category), `eval languages SET.json...` (per language), `eval updates` (current and as-of values), `eval extraction [SET.json]` (facts learned from text: precision/recall per evidence class)',
  async run(args) {
    const [suite, ...rest] = args;
    if (suite === 'locomo') return runLocomoCommand(rest);
    if (suite === 'languages') return runLanguagesCommand(rest);
    if (suite === 'updates') return runUpdatesCommand(rest);
    if (suite === 'extraction') return runExtractionCommand(rest);
    process.stderr.write(`${USAGE}\n\n${LANGUAGES_USAGE}\n\n${UPDATES_USAGE}\n\n${EXTRACTION_USAGE}\n`);
    return suite === undefined || suite === '--help' ? 0 : 2;
  },
});

function contextWindowOption(
  value: string | true | undefined,
): { previous: number; next: number } | undefined {
  if (value === undefined) return undefined;
  const m = typeof value === 'string' ? /^(\d+),(\d+)$/.exec(value.trim()) : null;
  if (!m) throw new UsageError('--context-window takes PREVIOUS,NEXT (e.g. 1,1)');
  return { previous: Number(m[1]), next: Number(m[2]) };
}
