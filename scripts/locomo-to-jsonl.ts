/** CLI of the LoCoMo → JSON Lines conversion (the conversion itself: src/eval/locomo-jsonl.ts). */
import { createWriteStream, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { conversationIdOf, locomoToObservations } from '../src/eval/locomo-jsonl.js';

export * from '../src/eval/locomo-jsonl.js';

async function main(argv: string[]): Promise<number> {
  const args = [...argv];
  const outAt = args.indexOf('--out');
  let out: string | null = null;
  if (outAt >= 0) {
    out = args[outAt + 1] ?? null;
    if (!out) {
      process.stderr.write('--out needs a file name\n');
      return 2;
    }
    args.splice(outAt, 2);
  }
  if (args.length !== 1) {
    process.stderr.write('Usage: tsx scripts/locomo-to-jsonl.ts FILE.json [--out FILE.jsonl]\n');
    return 2;
  }
  const file = args[0]!;
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const observations = locomoToObservations(raw, conversationIdOf(raw, file));
  const text = observations.map((o) => JSON.stringify(o)).join('\n') + (observations.length ? '\n' : '');
  if (out) {
    const stream = createWriteStream(out);
    await new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      stream.end(text, resolve);
    });
    process.stderr.write(`${file}: ${observations.length} observations → ${out}\n`);
  } else {
    process.stdout.write(text);
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
