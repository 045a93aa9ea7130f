import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError, parseArgs } from './args.js';

export const UPDATES_USAGE = `Usage: memgate eval updates [SET.json] [options]
  (or: npm run eval:updates)

Writes each scenario of a knowledge-update set (default eval/sets/knowledge-updates.json)
through the GraphQL API, twice (its own timestamps, then every timestamp of a day made equal),
and asks every question through context at 400 and 2,000 tokens and search (k = 10): the
share whose current or as-of value is in the answer before any outdated one.

Options:
  --out FILE.json     JSON report (default eval/results/knowledge-updates.json; the table beside it as .txt)
  --data-dir DIR      offline embedder cache (default MEMGATE_DATA_DIR or ./.memgate)
  DATABASE_URL        set it to run on native PostgreSQL (an empty database)`;

export async function runUpdatesCommand(args: string[]): Promise<number> {
  const { positional, options } = parseArgs(args, ['out', 'data-dir']);
  if (options.has('help')) {
    process.stdout.write(`${UPDATES_USAGE}\n`);
    return 0;
  }
  if (positional.length > 1) {
    process.stderr.write(`${new UsageError('name at most one set').message}\n\n${UPDATES_USAGE}\n`);
    return 2;
  }
  const { runUpdateEval, formatUpdateReport } = await import('../eval/knowledge-updates.js');
  const out = options.get('out');
  const dataDir = options.get('data-dir');
  const file = positional[0] ?? 'eval/sets/knowledge-updates.json';
  const report = await runUpdateEval({
    file,
    dataDir: typeof dataDir === 'string' ? dataDir : (process.env.MEMGATE_DATA_DIR ?? './.memgate'),
    databaseUrl: process.env.DATABASE_URL || undefined,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  const target = typeof out === 'string' ? out : 'eval/results/knowledge-updates.json';
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(target.replace(/\.json$/, '.txt'), formatUpdateReport(report));
  process.stdout.write(formatUpdateReport(report));
  process.stdout.write(`report: ${target}\n`);
  return 0;
}
