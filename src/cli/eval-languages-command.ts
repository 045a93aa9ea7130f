import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SearchMode } from '../modules/retrieval/index.js';
import { UsageError, parseArgs } from './args.js';

export const LANGUAGES_USAGE = `Usage: memgate eval languages FILE.json... [options]
  (or: npm run eval:languages -- eval/sets/ru.json eval/sets/en.json)

Writes each language set into one namespace per text-search configuration, and all of them
into one \`auto\` namespace, asks every question through search, and prints R@5/R@10/MRR per
namespace, language and mode.

Options:
  --text-search russian,english,auto   configurations of the single-language namespaces
                                       (default: russian,english,auto)
  --modes LEXICAL,HYBRID               modes to run (default: LEXICAL,VECTOR,HYBRID)
  --no-mixed                           skip the namespace holding every set
  --out FILE.json                      JSON report (default eval/results/languages-<time>.json)
  --data-dir DIR                       offline embedder cache (default MEMGATE_DATA_DIR or ./.memgate)
  DATABASE_URL                         set it to run on native PostgreSQL (an empty database)`;

const MODES: readonly SearchMode[] = ['LEXICAL', 'VECTOR', 'HYBRID'];

export async function runLanguagesCommand(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${LANGUAGES_USAGE}\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(`${LANGUAGES_USAGE}\n`);
    return 0;
  }
  const { runLanguageEval, formatLanguageReport } = await import('../eval/languages.js');
  const report = await runLanguageEval({
    ...parsed.options,
    log: (message) => process.stderr.write(`${message}\n`),
  });
  process.stdout.write(formatLanguageReport(report));
  mkdirSync(dirname(parsed.out), { recursive: true });
  writeFileSync(parsed.out, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(parsed.out.replace(/\.json$/, '.txt'), formatLanguageReport(report));
  process.stdout.write(`report: ${parsed.out}\n`);
  return 0;
}

function parseOptions(args: string[]) {
  const { positional, options } = parseArgs(args, ['modes', 'text-search', 'out', 'data-dir']);
  if (options.has('help')) return 'help' as const;
  if (positional.length === 0) throw new UsageError('name at least one language set FILE.json');
  const list = (name: string) => {
    const v = options.get(name);
    return typeof v === 'string' ? v.split(',').map((s) => s.trim()) : null;
  };
  const modes = (list('modes') ?? [...MODES]).map((m) => {
    const mode = m.toUpperCase() as SearchMode;
    if (!MODES.includes(mode)) throw new UsageError(`unknown mode "${m}"`);
    return mode;
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const out = options.get('out');
  const dataDir = options.get('data-dir');
  return {
    out: typeof out === 'string' ? out : join('eval', 'results', `languages-${stamp}.json`),
    options: {
      files: positional,
      modes,
      textSearch: list('text-search') ?? ['russian', 'english', 'auto'],
      mixed: !options.has('no-mixed'),
      dataDir: typeof dataDir === 'string' ? dataDir : (process.env.MEMGATE_DATA_DIR ?? './.memgate'),
      databaseUrl: process.env.DATABASE_URL || undefined,
    },
  };
}
