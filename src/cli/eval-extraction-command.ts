import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError, parseArgs } from './args.js';

export const EXTRACTION_USAGE = `Usage: memgate eval extraction [SET.json] [--out eval/results/extraction.json]
  (or: npm run eval:extraction)

Writes the set's messages through recordObservations and scores the facts learned from them,
precision and recall per evidence class (EXTRACTED: domain-pack rules, offline; INFERRED: the
model) and per language. The model path runs when EXTRACTION_EVAL_LLM names one
(openai:<model>, with OPENAI_BASE_URL / OPENAI_API_KEY for its server).`;

export async function runExtractionCommand(args: string[]): Promise<number> {
  let file = 'eval/sets/extraction.json';
  let out = 'eval/results/extraction.json';
  try {
    const { positional, options } = parseArgs(args, ['out']);
    if (options.has('help')) {
      process.stdout.write(`${EXTRACTION_USAGE}\n`);
      return 0;
    }
    if (positional.length > 1) throw new UsageError('one set at a time');
    if (positional[0]) file = positional[0];
    const o = options.get('out');
    if (typeof o === 'string') out = o;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${EXTRACTION_USAGE}\n`);
    return 2;
  }
  const { formatExtractionReport, runExtractionEval } = await import('../eval/extraction.js');
  const report = await runExtractionEval(file, {
    llm: process.env.EXTRACTION_EVAL_LLM,
    openaiBaseUrl: process.env.OPENAI_BASE_URL,
    openaiApiKey: process.env.OPENAI_API_KEY,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  const text = formatExtractionReport(report);
  process.stdout.write(text);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(out.replace(/\.json$/, '.txt'), text);
  return 0;
}
